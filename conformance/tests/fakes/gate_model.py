"""An independent model of the approval gate, written from spec/approval-gate.md alone,
with switchable flaws: each flaw is a bypass class a peer fell for (FACTS.md section 6).

    python3 gate_model.py                      # the model as the spec reads
    python3 gate_model.py --flaw string-prefix  # "inside" by string prefix (proj vs proj_evil)
    python3 gate_model.py --flaw lexical-dotdot # folds `..` as text before resolving
    python3 gate_model.py --flaw no-symlinks    # never follows symbolic links
    python3 gate_model.py --flaw family-prefix  # family grants matched as string prefixes
    python3 gate_model.py --flaw command-word-only  # a delete counts only as the command word
    python3 gate_model.py --flaw glob-blind     # ignores what a glob or expansion after rm becomes
    python3 gate_model.py --flaw loader-blind   # the dynamic loader is not a wrapper
    python3 gate_model.py --flaw basename-read  # a read command at any path is on the read list
    python3 gate_model.py --flaw dollar-blind   # `$`, `{` and `}` do not end the auto-safe route
    python3 gate_model.py --flaw family-interpreters  # a hand-written family for a shell or interpreter covers it

CI runs the gate suite against every flawed variant and requires each to fail the
scenario written for its class: the suite proves it catches what it claims to catch.
Standard library only.
"""

from __future__ import annotations
import os
import pathlib
import re
import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any, Optional

if not __package__:  # started as a file: the repository's root, to import by package
    sys.path[0] = str(pathlib.Path(__file__).resolve().parents[3])
from conformance.adapters import protocol  # noqa: E402
from conformance.adapters.protocol import Answer, Request, Unsupported  # noqa: E402

#: A word and, per character, whether it stood unquoted.
Word = tuple[str, list[bool]]
#: A piece of a word for brace expansion: ('lit' | 'open' | 'comma', text), ('items', [text...]),
#: ('group', [[piece...]...]).
Piece = tuple[str, Any]

FLAW = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == '--flaw' else None
if FLAW not in (None, 'string-prefix', 'lexical-dotdot', 'no-symlinks', 'family-prefix', 'command-word-only', 'glob-blind',
                 'loader-blind', 'basename-read', 'dollar-blind', 'family-interpreters'):
    sys.exit(f'gate_model.py: unknown flaw {FLAW!r}')
READ = set("base64 cat cut date echo find grep head hexdump id ls mkdir nl od printf pwd rg sort stat strings tac tail tr true uname uniq wc whoami xxd".split())
META = set(";&|\n\r<>${}`")
CHAIN = set(";&|\n\r")
NEVER: dict[str, str] = {}
for code, names in [("interpreter", "sh bash zsh dash ksh fish ash csh tcsh busybox python pypy perl ruby node nodejs deno bun php lua tclsh rscript osascript awk gawk mawk nawk"),
                    ("exec_wrapper", "sudo doas su env xargs nohup time timeout ssh docker podman setsid stdbuf nice ionice chroot unshare"),
                    ("pager_editor", "less more pg vi vim view vimdiff rvim rview nano pico emacs ed ex"),
                    ("transfer", "curl wget scp sftp rsync ftp nc ncat netcat socat")]:
    for n in names.split():
        NEVER[n] = code
INTERP = [n for n, c in NEVER.items() if c == "interpreter"]
FIND_ESC = {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprintf", "-fprint", "-fprint0", "-fls", "-files0-from",
            "-L", "-follow"}  # GATE-FLAG-9: link-following walks
LONG = {"rg": ["--pre", "--pre-glob", "--hostname-bin", "--follow"], "sort": ["--output", "--compress-program", "--files0-from"],
        "tail": ["--follow", "--retry"], "grep": ["--null", "--dereference-recursive"], "head": ["--zero-terminated"],
        "wc": ["--files0-from"], "ls": ["--dereference"], "date": ["--set"]}
SHORT = {"sort": "o", "tail": "fF", "grep": "ZR", "head": "z", "rg": "L", "ls": "L", "date": "s"}
WINDOWS = {"terminal": 300000, "web": 600000, "speech": 25000}

def split(line: str, lenient: bool = False) -> Optional[list[Word]]:
    """POSIX split. Returns list of (word, unquoted_mask) or None if unreadable.
    lenient: metachars outside quotes become separators ('SEP')."""
    words: list[Word] = []; cur: list[str] = []; mask: list[bool] = []; inword = False; i = 0; n = len(line)
    def end() -> None:
        nonlocal cur, mask, inword
        if inword:
            words.append(("".join(cur), mask))
        cur = []; mask = []; inword = False
    while i < n:
        c = line[i]
        if c in " \t":
            end(); i += 1; continue
        if lenient and c in META or (lenient and c in "()"):
            end(); words.append(("\0SEP", [])); i += 1; continue
        inword = True
        if c == "'":
            j = line.find("'", i + 1)
            if j < 0: return None
            for ch in line[i+1:j]: cur.append(ch); mask.append(False)
            i = j + 1; continue
        if c == '"':
            i += 1
            while True:
                if i >= n: return None
                ch = line[i]
                if ch == '"': i += 1; break
                if ch == "\\" and i + 1 < n and line[i+1] in '"\\$`':
                    cur.append(line[i+1]); mask.append(False); i += 2; continue
                cur.append(ch); mask.append(False); i += 1
            continue
        if c == "\\":
            if i + 1 >= n: return None
            cur.append(line[i+1]); mask.append(False); i += 2; continue
        cur.append(c); mask.append(True); i += 1
    end()
    return words

def base(w: str) -> str: return w.rsplit("/", 1)[-1]

def rm_recursive(args: Iterable[str]) -> bool:
    for a in args:
        if a == "--": return False
        if a.startswith("--"):
            name = a[2:].split("=")[0]
            if name and "--recursive".startswith("--" + name): return True
        elif a.startswith("-") and len(a) > 1:
            if "r" in a[1:] or "R" in a[1:]: return True
    return False

SHELLS = set("sh bash zsh dash ksh fish ash csh tcsh busybox toybox mksh yash posh".split())
LAUNCHERS = set("""run0 tmux screen script watch flock strace ltrace valgrind parallel sem taskset chrt
numactl nsenter setpriv prlimit fakeroot eatmydata unbuffer chronic ifne firejail systemd-run pkexec
runuser sg runcon cgexec torsocks proxychains proxychains4 xvfb-run dbus-run-session dbus-launch
catchsegv tsp entr caffeinate sandbox-exec command builtin exec eval trap npx pnpx bunx uvx pipx at
batch setarch linux32 linux64 faketime proot bwrap rlwrap ssh-agent expect gdb""".split())
RESERVED = {"if", "then", "else", "elif", "do", "while", "until", "!", "time"}
AWKS = {"awk", "gawk", "mawk", "nawk"}
STDIN_WORDS = {"-", "-s", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"}

def stem(name: str) -> str:
    return name.rstrip("0123456789.")

def is_interp(name: str) -> bool:
    """GATE-NEVER-3, -6: a listed interpreter (or toybox, R), versioned, any case."""
    n = stem(name.lower())
    return NEVER.get(n) == "interpreter" or n in ("toybox", "r")

def is_loader(name: str) -> bool:
    """GATE-NEVER-7: the dynamic loader runs the program named in its arguments."""
    if FLAW == "loader-blind": return False
    n = name.lower()
    return n == "ld.so" or n.startswith("ld.so.") or ((n.startswith("ld-") or n.startswith("ld64.")) and ".so" in n)

def is_wrapper(name: str) -> bool:
    n = name.lower()
    return NEVER.get(n) == "exec_wrapper" or n in LAUNCHERS or is_loader(n) or is_interp(n) or stem(n) in SHELLS or n in ("find", "source", ".", "time")

def lex(text: str) -> list[tuple[str, bool]]:
    """Lenient POSIX words of one simple command: (text, unquoted-glob) pairs."""
    out: list[tuple[str, bool]] = []; cur: list[str] = []; q: Optional[str] = None
    glob, inw, i = False, False, 0
    while i < len(text):
        c = text[i]
        if q == "'":
            if c == "'": q = None
            else: cur.append(c)
        elif q == '"':
            if c == '"': q = None
            elif c == "\\" and i + 1 < len(text) and text[i+1] in '"\\$`\n':
                if text[i+1] != "\n": cur.append(text[i+1])
                i += 1
            else: cur.append(c)
        elif c in " \t":
            if inw: out.append(("".join(cur), glob))
            cur, glob, inw = [], False, False
        elif c in "'\"":
            q = c; inw = True
        elif c == "\\":
            inw = True
            if i + 1 < len(text):
                if text[i+1] != "\n": cur.append(text[i+1])
                i += 1
        else:
            inw = True; cur.append(c)
            if c in "*?[": glob = True
        i += 1
    if inw: out.append(("".join(cur), glob))
    return out

def fnmatch_one(pat: str, name: str) -> bool:
    """Whether glob `pat` matches `name` (`*`, `?`, `[...]` with `!`/`^` and ranges): one
    pass over the pattern carrying the set of positions of `name` reached, so a run of
    stars costs linear time, never a backtracking search (GATE-DANGER-12)."""
    reach = {0}; p = 0; n = len(name)
    while p < len(pat) and reach:
        c = pat[p]
        if c == "*":
            reach = set(range(min(reach), n + 1)); p += 1; continue
        if c == "?":
            reach = {k + 1 for k in reach if k < n}; p += 1; continue
        if c == "[":
            q = p + 1
            neg = q < len(pat) and pat[q] in "!^"
            if neg: q += 1
            e = pat.find("]", q + 1)
            if e >= 0:
                body = pat[q:e]
                def hit(ch: str) -> bool:
                    j, ok = 0, False
                    while j < len(body):
                        if j + 2 < len(body) and body[j+1] == "-":
                            ok |= body[j] <= ch <= body[j+2]; j += 3
                        else:
                            ok |= body[j] == ch; j += 1
                    return ok != neg
                reach = {k + 1 for k in reach if k < n and hit(name[k])}; p = e + 1; continue
        reach = {k + 1 for k in reach if k < n and name[k] == c}; p += 1
    return n in reach

def may_be_rm(w: str, g: bool) -> bool:
    tail = re.split(r"[/=!]", w)[-1].lower()
    if tail in ("rm", "grm", "srm"): return True
    if len(w) > 3 and w[0] == "-" and w[1] != "-" and w[-2:].lower() == "rm": return True
    return g and any(fnmatch_one(tail, n) for n in ("rm", "grm", "srm"))

def inline_code(args: Iterable[tuple[str, bool]]) -> bool:
    for a, _ in args:
        if a.startswith("--"):
            n = a[2:].split("=")[0]
            if n and any(l.startswith(n) for l in ("eval", "print", "command", "exec", "run", "expr")): return True
        elif a == "eval" or (len(a) > 1 and a[0] == "-" and set(a[1:]) & set("ceEprBR")): return True
    return False

def names_descriptor(text: str) -> bool:
    """GATE-DANGER-11: a piece of the word (cut at blanks, `= : ,` and redirection
    operators) holding a `/` with a path component `stdin` or `fd`, in any case."""
    for piece in re.split(r"[ \t\n=:,<>&|;]", text):
        if "/" in piece and any(c.lower() in ("stdin", "fd") for c in piece.split("/")):
            return True
    return False

def stdin_word(a: str) -> bool:
    return a in STDIN_WORDS or names_descriptor(a)

def program_from_input(name: str, stdin: bool, operand: bool) -> bool:
    """GATE-DANGER-9(d), -11: whether `name`, fed, reads its program from that input;
    `stdin`: a later word names standard input or a descriptor, `operand`: a later word
    is an operand (not an option, redirection or its target)."""
    n = name.lower()
    if n in ("parallel", "sem"): return True
    if not (is_interp(n) or stem(n) in SHELLS or n in ("source", ".")): return False
    if stdin: return True
    if n in AWKS: return False
    return not operand

CAP = 1 << 60

def brace_sequence(body: str) -> Optional[list[str]]:
    """The items of a `{x..y[..step]}` body, or None when it is not one."""
    if len(body) > 64: return None
    sm = re.fullmatch(r"(-?\d+|.)\.\.(-?\d+|.)(?:\.\.(-?\d+))?", body)
    if not sm: return None
    x, y = sm.group(1), sm.group(2)
    step = abs(int(sm.group(3))) if sm.group(3) else 1
    step = step or 1
    if re.fullmatch(r"-?\d+", x) and re.fullmatch(r"-?\d+", y):
        a_, b_ = int(x), int(y); chars = False
    elif len(x) == 1 and len(y) == 1 and not (x.isdigit() and y.isdigit()):
        a_, b_ = ord(x), ord(y); chars = True
    else: return None
    cnt = abs(b_ - a_) // step + 1
    if cnt > 257: return ["?"] * 257  # too many words either way
    rng = range(a_, b_ + 1, step) if b_ >= a_ else range(a_, b_ - 1, -step)
    return [chr(v) if chars else str(v) for v in rng]

def brace_parse(w: str) -> Optional[list[Piece]]:
    """One pass over a word with a stack of open braces (braces and commas found
    quote-blind): a list of pieces ('lit', text), ('group', [pieces...]),
    ('items', [text...])."""
    pieces: list[Piece] = []; stack: list[list[Any]] = []; run: list[str] = []
    def flush() -> None:
        if run: pieces.append(("lit", "".join(run))); run.clear()
    for i, c in enumerate(w):
        if c == "{":
            flush()
            stack.append([len(pieces), i, i > 0 and w[i-1] == "$", False])
            pieces.append(("open", "{"))
        elif c == "," and stack and not stack[-1][2]:
            flush()
            stack[-1][3] = True
            pieces.append(("comma", ","))
        elif c == "}" and stack:
            flush()
            start, op, param, comma = stack.pop()
            if param:
                run.append("}")
            elif comma:
                # a group nested in 256 others expands to more than 256 words
                if len(stack) >= 256: return None
                alts: list[list[Piece]] = [[]]
                for pc in pieces[start+1:]:
                    if pc[0] == "comma": alts.append([])
                    else: alts[-1].append(pc)
                del pieces[start:]
                pieces.append(("group", alts))
            else:
                seq = brace_sequence(w[op+1:i]) if i - op - 1 <= 64 else None
                if seq is None: run.append("}")
                else:
                    del pieces[start:]
                    pieces.append(("items", seq))
        else:
            run.append(c)
    flush()
    return pieces

def brace_measure(pieces: list[Piece], work: list[int]) -> tuple[int, int]:
    """(words, bytes) the pieces expand to, saturating; work[0] adds what nested groups
    build on the way."""
    cnt, size = 1, 0
    for kind, v in pieces:
        if kind in ("lit", "open", "comma"): c, b = 1, len(v)
        elif kind == "items": c, b = len(v), sum(map(len, v))
        else:
            c = b = 0
            for alt in v:
                c2, b2 = brace_measure(alt, work)
                c, b = min(CAP, c + c2), min(CAP, b + b2)
            work[0] = min(CAP, work[0] + b)
        cnt, size = min(CAP, cnt * c), min(CAP, size * c + b * cnt)
    return cnt, size

def brace_build(pieces: list[Piece]) -> list[str]:
    words = [""]
    choices: list[str]
    for kind, v in pieces:
        if kind in ("lit", "open", "comma"): choices = [v]
        elif kind == "items": choices = v
        else: choices = [x for alt in v for x in brace_build(alt)]
        if len(choices) == 1: words = [x + choices[0] for x in words]
        else: words = [x + c for x in words for c in choices]
    return words

def brace_words(line: str) -> Iterator[tuple[str, bool]]:
    """Split at the shell's word ends for brace expansion: an unquoted blank, newline or
    operator (GATE-DANGER-14). Yields (text, is_word)."""
    i, n = 0, len(line)
    while i < n:
        j = i
        while j < n:
            c = line[j]
            if c in " \t\n\r;&|<>()": break
            if c == "\\": j += 2
            elif c == "'":
                k = line.find("'", j + 1); j = n if k < 0 else k + 1
            elif c == '"':
                j += 1
                while j < n and line[j] != '"': j += 2 if line[j] == "\\" else 1
                j += 1
            else: j += 1
        j = min(j, n)
        if j == i: yield line[i], False; i += 1
        else: yield line[i:j], True; i = j

def expand_braces(line: str) -> Optional[str]:
    """GATE-DANGER-8, -12, -14: every word's brace expansion; None past 256 words or 8
    bytes per byte of the line plus 4096."""
    words_left, max_bytes = 256, 8 * len(line) + 4096
    out: list[str] = []; size = 0
    for t, isword in brace_words(line):
        if isword and "{" in t:
            pcs = brace_parse(t)
            if pcs is None: return None
            work = [0]
            cnt, b = brace_measure(pcs, work)
            if cnt > words_left or b + cnt > max_bytes or work[0] > max_bytes: return None
            if cnt > 1: words_left -= cnt
            t = " ".join(brace_build(pcs))
        out.append(t); size += len(t)
        if size > max_bytes: return None
    return "".join(out)

def extglob_as_star(line: str) -> str:
    """GATE-DANGER-13: each extended glob group outside quotes (`@( ) !( ) +( ) *( )
    ?( )`, quotes and blanks inside included) read as `*`; one pass, a stack of parens."""
    stack: list[Optional[int]] = []; spans: list[tuple[int, int]] = []; groups = 0
    single = double = False
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == "\\" and not single: i += 2; continue
        if c == "'" and not double: single = not single
        elif c == '"' and not single: double = not double
        elif c == "(" and not single and not double:
            g = i > 0 and line[i-1] in "@!+*?" and not (i > 1 and line[i-2] == "\\")
            if g: groups += 1
            stack.append(i - 1 if g else None)
        elif c == ")" and not single and not double and stack:
            frm = stack.pop()
            if frm is not None:
                groups -= 1
                if groups == 0: spans.append((frm, i + 1))
        i += 1
    if not spans: return line
    out: list[str] = []; at = 0
    for frm, to in spans:
        out.append(line[at:frm]); out.append("*"); at = to
    out.append(line[at:])
    return "".join(out)

def respell(line: str) -> Optional[str]:
    """GATE-DANGER-6, -8: the line as the shell will respell it before it runs; None
    when a brace expansion is too large to read."""
    line = line.replace("\\\n", "")
    line = re.sub(r"\$\{IFS[^}]*(?:\}|$)", " ", line)  # unclosed: to the end, once
    line = re.sub(r"\$IFS(?![A-Za-z0-9_])", " ", line)
    def ansi_c(m: re.Match[str]) -> str:
        body = m.group(1)
        body = re.sub(r"\\x([0-9A-Fa-f]{1,2})", lambda x: chr(int(x.group(1), 16)), body)
        body = re.sub(r"\\u([0-9A-Fa-f]{1,4})", lambda x: chr(int(x.group(1), 16)), body)
        body = re.sub(r"\\([0-7]{1,3})", lambda x: chr(int(x.group(1), 8)), body)
        return "'" + body + "'"
    line = re.sub(r"\$'([^']*)'", ansi_c, line).replace('$"', '"')
    line = extglob_as_star(line)
    if "{" in line:
        return expand_braces(line)
    return line

def dangerous(line: str, depth: int = 0) -> bool:
    if depth == 0:
        r = respell(line)
        if r is None: return True
        if r != line and dangerous(r, 1): return True
    if depth > 8: return True
    # backticks as $( ), then a quote-blind split, noting what a pipe or redirection feeds
    n = 0
    def bt(m: re.Match[str]) -> str:
        nonlocal n
        n += 1
        return "$(" if n % 2 else ")"
    line = re.sub("`", bt, line)
    segs: list[tuple[str, bool]] = []; cur: list[str] = []; fed = False
    for i, c in enumerate(line):
        pair = (c == "{" and line[i+1:i+2] == "}") or (c == "}" and line[i-1:i] == "{") or (c == "&" and line[i-1:i] in ("<", ">") and i > 0)
        if c in ";&|\n\r(){}" and not pair:
            text = "".join(cur)
            segs.append((text, fed or "<<" in text or (c == "(" and text.rstrip()[-1:] in ("<", ">"))))
            fed = (c == "|" and line[i-1:i] != "|" and line[i+1:i+2] != "|") or (c == "&" and line[i-1:i] == "|")
            cur = []
        else:
            cur.append(c)
    text = "".join(cur)
    segs.append((text, fed or "<<" in text))
    awk_runs = "system" in line or "getline" in line or re.search(r"\|\s*['\"]", line)
    descriptor = runs_program = False  # GATE-DANGER-11, over the whole line
    for text, isfed in segs:
        ws = lex(text)
        descriptor = descriptor or any(names_descriptor(w) for w, _ in ws)
        # a standard input duplicated from another descriptor (`bash <&3`) feeds it too
        isfed = isfed or any(re.match(r"^0?<&", w) for w, _ in ws)
        i = 0
        while i < len(ws):
            w = ws[i][0]
            if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w) or w in RESERVED: i += 1; continue
            m = re.match(r"^[0-9]*[<>]+[|&]?(.*)$", w)
            if m: i += 1 if m.group(1) else 2; continue
            break
        if i >= len(ws): continue
        if "$" in ws[i][0] or ws[i][1]: return True
        start, wrapped, spread, splice = i, False, False, False
        repl: Optional[str] = None
        # what the words after each index hold, computed once from the end so that a long
        # run of `rm`, `find` or shell words reads in linear time (GATE-DANGER-12)
        nw = len(ws)
        rm_after: list[Optional[bool]] = [None] * (nw + 1)
        find_after, inline_after = [False] * (nw + 1), [False] * (nw + 1)
        stdin_after, operand_after = [False] * (nw + 1), [False] * (nw + 1)
        target = [False] * (nw + 1)
        for j, (a, _) in enumerate(ws):
            m = re.match(r"^[0-9]*[<>]+[|&]?(.*)$", a)
            if m and not target[j] and m.group(1) == "": target[j + 1] = True
        d: Optional[bool]
        for j in range(nw - 1, -1, -1):
            a, ag = ws[j]
            if a == "--": d = False
            elif rm_recursive([a]) or (FLAW != "glob-blind" and ("$" in a or (ag and a[:1] in ("*", "?", "[", "-")))): d = True
            else: d = rm_after[j + 1]
            rm_after[j] = d
            find_after[j] = find_after[j + 1] or a == "-delete" or ("$" in a and not any(c in a for c in " \t\n")) or (ag and fnmatch_one(a, "-delete"))
            inline_after[j] = inline_after[j + 1] or inline_code([(a, ag)])
            stdin_after[j] = stdin_after[j + 1] or stdin_word(a)
            operand_after[j] = operand_after[j + 1] or not (target[j] or re.match(r"^[0-9]*[<>]+[|&]?(.*)$", a) or a.startswith("-"))
        for k, (w, g) in enumerate(ws):
            blank = any(c in w for c in " \t\n")
            name = base(w).lower()
            if wrapped and not blank and "$" in w: return True
            if may_be_rm(w, g) and (k == start or FLAW != "command-word-only"):
                if rm_after[k + 1] or (rm_after[k + 1] is None and spread): return True
            if name == "find" and find_after[k + 1]: return True
            if splice and blank and ("{}" in w or (repl and repl in w)): return True
            if spread and repl is None:  # xargs -I REPLACE, -IREPLACE, --replace=REPLACE
                m = re.fullmatch(r"(?:-I|--replace=)(.+)", w)
                if m: repl = m.group(1)
                elif w == "-I" and k + 1 < nw: repl = ws[k + 1][0] or None
            if name in AWKS:
                if awk_runs: return True
            elif is_interp(name) and stem(name) not in SHELLS and inline_after[k + 1]: return True
            cmdpos = k == start or (k > start and wrapped)
            if is_interp(name) or stem(name) in SHELLS or name in AWKS or name == "sed" or (cmdpos and name in ("source", ".")):
                runs_program = True
            if isfed and cmdpos and program_from_input(name, stdin_after[k + 1], operand_after[k + 1]): return True
            # the text attached to a redirection is read again on its own (`3<<<'rm -rf x'`)
            m = re.match(r"^[0-9]*(?:<<<|<<-?|<>|<&|>&|&>>?|>>|>\||<|>)(.+)$", w, re.S)
            again = m.group(1) if m else w
            if any(c in again for c in " \t\n") and (k == start or wrapped or FLAW != "command-word-only") and dangerous(again, depth + 1): return True
            if k >= start and is_wrapper(name): wrapped = True
            if name in ("xargs", "parallel", "sem"): spread = True
            if spread or name == "find": splice = True
    return descriptor and runs_program

def interp_like(name: str) -> Optional[str]:
    name = name.lower()
    if name in NEVER: return NEVER[name]
    if name in LAUNCHERS or is_loader(name): return "exec_wrapper"
    if is_interp(name): return "interpreter"
    return None

def resolve(path: str, ws: str) -> Optional[str]:
    """Kernel-like resolution; returns (abs path or None for loop)."""
    if FLAW == "lexical-dotdot":
        path = os.path.normpath(path)
    parts = path.split("/")
    cur = "/" if path.startswith("/") else ws
    todo = [p for p in parts if p != ""]
    hops = 0
    while todo:
        p = todo.pop(0)
        if p == ".": continue
        if p == "..": cur = os.path.dirname(cur) or "/"; continue
        nxt = os.path.join(cur, p)
        if FLAW != "no-symlinks" and os.path.islink(nxt):
            hops += 1
            if hops > 40: return None
            tgt = os.readlink(nxt)
            if tgt.startswith("/"): cur = "/"
            todo = [x for x in tgt.split("/") if x != ""] + todo
            continue
        if os.path.exists(nxt):
            cur = nxt; continue
        # missing: append rest lexically
        rest = [p] + todo
        out = cur
        for r in rest:
            if r == ".": continue
            if r == "..": out = os.path.dirname(out) or "/"
            else: out = os.path.join(out, r)
        return out
    return cur

def inside(p: Optional[str], ws: str) -> bool:
    if FLAW == "string-prefix":
        return p is not None and p.startswith(ws)
    return p is not None and (p == ws or p.startswith(ws.rstrip("/") + "/"))

def ends_options(prev: Optional[str]) -> bool:
    """GATE-FLAG-6: after the command, an operand, `-` or a `--name=value` word."""
    return prev is None or prev == "-" or not prev.startswith("-") or (prev.startswith("--") and "=" in prev)

def auto_check(line: str, ws: str) -> Optional[str]:
    meta = META - set("${}") if FLAW == "dollar-blind" else META
    if any(c in meta for c in line): return "metacharacter"
    words = split(line)
    if words is None: return "unreadable"
    if not words: return "empty"
    first = words[0][0]
    if FLAW == "basename-read": first = base(first)
    if first not in READ: return "not_read_list"
    args = words[1:]
    # GATE-FLAG-8: binutils' response files are read before option parsing
    if first == "strings" and any(w.startswith("@") for w, _ in args): return "escape_flag"
    # escape flags; a `--` ends the options only where no option can take it as its
    # value (GATE-FLAG-6)
    after = False
    prev: Optional[str] = None
    for w, _ in args:
        if first == "find":
            if w in FIND_ESC: return "escape_flag"
            continue
        if after: continue
        if w == "--" and ends_options(prev): after = True; continue
        prev = w
        if first == "tail" and w[:1] == "+" and w[-1:] in ("f", "F") and w[1:-1].isdigit(): return "escape_flag"
        if w.startswith("--") and first in LONG:
            name = w.split("=")[0]
            if len(name) > 2 and any(f.startswith(name) for f in LONG[first]): return "escape_flag"
        elif w.startswith("-") and not w.startswith("--") and first in SHORT:
            if any(ch in SHORT[first] for ch in w[1:]): return "escape_flag"
    for w, m in args:
        if any(c in "*?[" and u for c, u in zip(w, m)): return "glob"
    after = False
    prev = None
    for w, m in args:
        cands: list[str] = []
        if w and w[0] == "~" and m and m[0]: return "path_outside"
        if not after and w == "--" and first != "find" and ends_options(prev): after = True; continue
        prev = w
        if not after and w.startswith("--"):
            if "=" in w: cands.append(w.split("=", 1)[1])
        elif not after and w.startswith("-") and len(w) > 1:
            # GATE-JAIL-7: every value a letter of the cluster could take, slash or not
            if "=" in w: cands.append(w.split("=", 1)[1])
            k = 1
            while k < len(w) and w[k].isascii() and w[k].isalnum(): k += 1
            cands += [w[p:] for p in range(2, min(k, len(w) - 1) + 1)]
        else:
            cands.append(w)
        for c in cands:
            if c == "": continue
            if not inside(resolve(c, ws), ws): return "path_outside"
    return None

class Session:
    def __init__(self, setup: dict[str, Any]) -> None:
        self.s = setup
        self.ws = os.path.realpath(setup["workspace"])
        self.grants = [dict(g) for g in setup.get("grants", [])]
        self.records: list[dict[str, Any]] = []
        #: The pending ask: tool, input, offers, window in ms.
        self.last: Optional[tuple[str, str, dict[str, Any], int]] = None

    def offers(self, tool: str, line: str, reason: Optional[str]) -> dict[str, Any]:
        s = self.s
        if tool not in ("shell", "execute_code"):
            return dict(exact=False, exact_withheld="card_only", family=None, family_withheld="card_only", text="x")
        if tool == "execute_code":
            return dict(exact=True, exact_withheld=None, family=None, family_withheld="code", text="code")
        if s["host"] == "windows":
            return dict(exact=False, exact_withheld="windows_host", family=None, family_withheld="windows_host", text="On Windows I can't read a command line the way the shell will, so every one of them asks.")
        if reason == "dangerous":
            return dict(exact=False, exact_withheld="dangerous", family=None, family_withheld="dangerous", text="It's a recursive delete, so it asks every time: this one can't be saved.")
        if reason == "empty":
            return dict(exact=False, exact_withheld="empty", family=None, family_withheld="empty", text="empty")
        words = split(line, lenient=True) or [(line.split()[0] if line.split() else "", [])]
        first = words[0][0] if words else ""
        if any(c in CHAIN for c in line):
            return dict(exact=True, exact_withheld=None, family=None, family_withheld="chained", text=f'This line chains commands, so a rule for "{first}" would never match it again.')
        if any(c in META for c in line):
            return dict(exact=True, exact_withheld=None, family=None, family_withheld="metacharacter", text="meta")
        w = split(line)
        first = w[0][0] if w else ""
        if "=" in first or not first:
            return dict(exact=True, exact_withheld=None, family=None, family_withheld="not_a_command_name", text="name")
        code = interp_like(base(first))
        if code:
            return dict(exact=True, exact_withheld=None, family=None, family_withheld=code, text="never")
        if any(c in first for c in "/*?["):  # GATE-FAMILY-7
            return dict(exact=True, exact_withheld=None, family=None, family_withheld="not_a_command_name", text="name")
        return dict(exact=True, exact_withheld=None, family=first, family_withheld=None, text=None)

    def decide(self, tool: str, line: str) -> Answer:
        s = self.s
        route: Optional[str] = None; reason: Optional[str] = None
        gt = lambda g: g.get("tool", "shell")
        if tool not in ("shell", "execute_code"):
            reason = "card_only"
        elif tool == "execute_code":
            if any(g["kind"] == "exact" and g["key"] == line and gt(g) == "execute_code" for g in self.grants):
                route = "grant_exact"
            else:
                reason = "code"
        elif s["host"] == "windows":
            reason = "windows_host"
        elif dangerous(line):
            reason = "dangerous"
        elif line in s.get("allow_list", []):
            route = "allow_list"
        elif any(g["kind"] == "exact" and g["key"] == line and gt(g) == "shell" for g in self.grants):
            route = "grant_exact"
        else:
            r = auto_check(line, self.ws)
            words = split(line)
            first = words[0][0] if words else None
            famok = False
            if first and not any(c in META for c in line) and (FLAW == "family-interpreters" or not interp_like(base(first))) and not any(c in first for c in "/*?[=") and any(g["kind"] == "family" and (first.startswith(g["key"]) if FLAW == "family-prefix" else g["key"] == first) for g in self.grants):
                if first in READ:
                    famok = r in (None, "glob") and r is None
                else:
                    famok = True
            if famok: route = "grant_family"
            elif r is None: route = "auto_safe"
            else: reason = r
        if route:
            self.records.append(dict(tool=tool, input=line, outcome="allowed"))
            self.last = None
            return dict(decision="allow", route=route, reason=route, offers=self.offers(tool, line, None), card=None)
        off = self.offers(tool, line, reason)
        if s["asker"] == "none":
            self.records.append(dict(tool=tool, input=line, outcome="denied"))
            self.last = None
            return dict(decision="deny", route="no_asker", reason=reason, offers=off, card=None)
        win = s.get("card_window_ms") or WINDOWS[s["asker"]]
        self.last = (tool, line, off, win)
        return dict(decision="ask", route="card", reason=reason, offers=off, card=dict(channel=s["asker"], window_ms=win))

    def answer(self, choice: str) -> Answer:
        assert self.last is not None, "an answer with no card pending"
        tool, line, off, win = self.last
        self.last = None
        saved: Optional[dict[str, str]] = None
        if choice == "silence":
            time.sleep(win / 1000); out = "expired"
        elif choice == "refuse": out = "refused"
        elif choice == "once": out = "approved"
        elif choice == "exact":
            if not off["exact"]: return dict(outcome="not_offered", saved=None)
            out = "approved"; saved = dict(kind="exact", key=line)
            if tool == "execute_code": saved["tool"] = "execute_code"
        elif choice == "family":
            if not off["family"]: return dict(outcome="not_offered", saved=None)
            out = "approved"; saved = dict(kind="family", key=off["family"])
        if saved:
            if saved not in self.grants: self.grants.append(saved)
            saved = {k: v for k, v in saved.items() if k != "tool"}
        self.records.append(dict(tool=tool, input=line, outcome=out))
        return dict(outcome=out, saved=saved)

    def revoke(self, t: str) -> list[dict[str, Any]]:
        if t.isdigit():
            i = int(t)
            if 1 <= i <= len(self.grants): return [self.grants.pop(i - 1)]
            return []
        gone = [g for g in self.grants if g["key"] == t]
        self.grants = [g for g in self.grants if g["key"] != t]
        return gone

def strip(gs: list[dict[str, Any]]) -> list[dict[str, Any]]: return [{k: v for k, v in g.items() if k != "tool"} for g in gs]

sessions: dict[str, Session] = {}
def handle(req: Request) -> Answer:
    op = req["op"]
    if op == "hello":
        return dict(protocol="1.0", name="model", version="0", capabilities=["gate"], environment=dict(os="linux", arch="x", kernel=None, landlock_abi=None, fence_backend=None))
    if op == "open":
        sessions[req["session"]] = Session(req["setup"]); return {}
    if op == "close": return {}
    S = sessions[req["session"]]
    if op == "decide": return S.decide(req["tool"], req["input"])
    if op == "answer": return S.answer(req["choice"])
    if op == "grants": return dict(grants=strip(S.grants))
    if op == "revoke": return dict(revoked=strip(S.revoke(req["target"])))
    if op == "audit": return dict(records=S.records)
    raise Unsupported(op)

protocol.serve(handle)
