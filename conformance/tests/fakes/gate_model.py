"""An independent model of the approval gate, written from spec/approval-gate.md alone,
with switchable flaws: each flaw is a bypass class a peer fell for (FACTS.md section 6).

    python3 gate_model.py                      # the model as the spec reads
    python3 gate_model.py --flaw string-prefix  # "inside" by string prefix (proj vs proj_evil)
    python3 gate_model.py --flaw lexical-dotdot # folds `..` as text before resolving
    python3 gate_model.py --flaw no-symlinks    # never follows symbolic links
    python3 gate_model.py --flaw family-prefix  # family grants matched as string prefixes

CI runs the gate suite against every flawed variant and requires each to fail the
scenario written for its class: the suite proves it catches what it claims to catch.
Standard library only.
"""
import json, os, re, sys, time

FLAW = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == '--flaw' else None
if FLAW not in (None, 'string-prefix', 'lexical-dotdot', 'no-symlinks', 'family-prefix'):
    sys.exit(f'gate_model.py: unknown flaw {FLAW!r}')
READ = set("base64 cat cut date echo find grep head hexdump id ls mkdir nl od printf pwd rg sort stat strings tac tail tr true uname uniq wc whoami xxd".split())
META = set(";&|\n\r<>${}`")
CHAIN = set(";&|\n\r")
NEVER = {}
for code, names in [("interpreter", "sh bash zsh dash ksh fish ash csh tcsh busybox python pypy perl ruby node nodejs deno bun php lua tclsh rscript osascript awk gawk mawk nawk"),
                    ("exec_wrapper", "sudo doas su env xargs nohup time timeout ssh docker podman setsid stdbuf nice ionice chroot unshare"),
                    ("pager_editor", "less more pg vi vim view vimdiff rvim rview nano pico emacs ed ex"),
                    ("transfer", "curl wget scp sftp rsync ftp nc ncat netcat socat")]:
    for n in names.split():
        NEVER[n] = code
INTERP = [n for n, c in NEVER.items() if c == "interpreter"]
FIND_ESC = {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprintf", "-fprint", "-fprint0", "-fls", "-files0-from"}
LONG = {"rg": ["--pre", "--pre-glob", "--hostname-bin"], "sort": ["--output", "--compress-program", "--files0-from"],
        "tail": ["--follow", "--retry"], "grep": ["--null"], "head": ["--zero-terminated"],
        "wc": ["--files0-from"]}
SHORT = {"sort": "o", "tail": "fF", "grep": "Z", "head": "z"}
WINDOWS = {"terminal": 300000, "web": 600000, "speech": 25000}

def split(line, lenient=False):
    """POSIX split. Returns list of (word, unquoted_mask) or None if unreadable.
    lenient: metachars outside quotes become separators ('SEP')."""
    words = []; cur = []; mask = []; inword = False; i = 0; n = len(line)
    def end():
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

def base(w): return w.rsplit("/", 1)[-1]

def rm_recursive(args):
    for a in args:
        if a == "--": return False
        if a.startswith("--"):
            name = a[2:].split("=")[0]
            if name and "--recursive".startswith("--" + name): return True
        elif a.startswith("-") and len(a) > 1:
            if "r" in a[1:] or "R" in a[1:]: return True
    return False

def respell(line):
    """GATE-DANGER-6: the line as the shell will respell it before it runs."""
    line = line.replace("\\\n", "").replace("${IFS}", " ").replace("$IFS", " ")
    def ansi_c(m):
        body = m.group(1)
        body = re.sub(r"\\x([0-9A-Fa-f]{1,2})", lambda x: chr(int(x.group(1), 16)), body)
        body = re.sub(r"\\([0-7]{1,3})", lambda x: chr(int(x.group(1), 8)), body)
        return "'" + body + "'"
    return re.sub(r"\$'([^']*)'", ansi_c, line)

def dangerous(line, depth=0):
    if depth == 0 and respell(line) != line and dangerous(respell(line), 1): return True
    if depth > 5: return False
    ws = split(line, lenient=True)
    if ws is None:
        ws = [(w, []) for w in line.replace('"', " ").replace("'", " ").split()]
    toks = [w for w, _ in ws]
    segs = [[]]
    for t in toks:
        if t == "\0SEP": segs.append([])
        else: segs[-1].append(t)
    for seg in segs:
        for k, t in enumerate(seg):
            if base(t) == "rm" and rm_recursive(seg[k+1:]): return True
            if t == "-delete" and any(base(x) == "find" for x in seg[:k]): return True
            if " " in t and dangerous(t, depth + 1): return True
    return False

def interp_like(name):
    if name in NEVER: return NEVER[name]
    for p in INTERP:
        if name.startswith(p) and len(name) > len(p) and all(ch.isdigit() or ch == "." for ch in name[len(p):]):
            return "interpreter"
    return None

def resolve(path, ws):
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

def inside(p, ws):
    if FLAW == "string-prefix":
        return p is not None and p.startswith(ws)
    return p is not None and (p == ws or p.startswith(ws.rstrip("/") + "/"))

def ends_options(prev):
    """GATE-FLAG-6: after the command, an operand, `-` or a `--name=value` word."""
    return prev is None or prev == "-" or not prev.startswith("-") or (prev.startswith("--") and "=" in prev)

def auto_check(line, ws):
    if any(c in META for c in line): return "metacharacter"
    words = split(line)
    if words is None: return "unreadable"
    if not words: return "empty"
    first = words[0][0]
    if first not in READ: return "not_read_list"
    args = words[1:]
    # escape flags; a `--` ends the options only where no option can take it as its
    # value (GATE-FLAG-6)
    after = False
    prev = None
    for w, m in args:
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
        cands = []
        if w and w[0] == "~" and m and m[0]: return "path_outside"
        if not after and w == "--" and first != "find" and ends_options(prev): after = True; continue
        prev = w
        if not after and w.startswith("--"):
            if "=" in w: cands.append(w.split("=", 1)[1])
        elif not after and w.startswith("-") and len(w) > 1:
            if "/" in w: cands += [w[2:], w[w.index("/"):]]
        else:
            cands.append(w)
        for c in cands:
            if c == "": continue
            if not inside(resolve(c, ws), ws): return "path_outside"
    return None

class Session:
    def __init__(self, setup):
        self.s = setup
        self.ws = os.path.realpath(setup["workspace"])
        self.grants = [dict(g) for g in setup.get("grants", [])]
        self.records = []
        self.last = None

    def offers(self, tool, line, reason):
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
        return dict(exact=True, exact_withheld=None, family=first, family_withheld=None, text=None)

    def decide(self, tool, line):
        s = self.s
        route, reason = None, None
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
            if first and not any(c in META for c in line) and not interp_like(base(first)) and any(g["kind"] == "family" and (first.startswith(g["key"]) if FLAW == "family-prefix" else g["key"] == first) for g in self.grants):
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
            return dict(decision="allow", route=route, reason=route, offers=None, card=None)
        off = self.offers(tool, line, reason)
        if s["asker"] == "none":
            self.records.append(dict(tool=tool, input=line, outcome="denied"))
            self.last = None
            return dict(decision="deny", route="no_asker", reason=reason, offers=off, card=None)
        win = s.get("card_window_ms") or WINDOWS[s["asker"]]
        self.last = (tool, line, off, win)
        return dict(decision="ask", route="card", reason=reason, offers=off, card=dict(channel=s["asker"], window_ms=win))

    def answer(self, choice):
        tool, line, off, win = self.last
        self.last = None
        saved = None
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

    def revoke(self, t):
        if t.isdigit():
            i = int(t)
            if 1 <= i <= len(self.grants): return [self.grants.pop(i - 1)]
            return []
        gone = [g for g in self.grants if g["key"] == t]
        self.grants = [g for g in self.grants if g["key"] != t]
        return gone

def strip(gs): return [{k: v for k, v in g.items() if k != "tool"} for g in gs]

sessions = {}
for raw in sys.stdin:
    req = json.loads(raw); rid = req["id"]; op = req["op"]
    if op == "hello":
        r = dict(ok=True, protocol="1.0", name="model", version="0", capabilities=["gate"], environment=dict(os="linux", arch="x", kernel=None, landlock_abi=None, fence_backend=None))
    elif op == "open":
        sessions[req["session"]] = Session(req["setup"]); r = dict(ok=True)
    elif op == "close": r = dict(ok=True)
    elif op == "bye":
        print(json.dumps(dict(id=rid, ok=True)), flush=True); break
    else:
        S = sessions[req["session"]]
        if op == "decide": r = dict(ok=True, **S.decide(req["tool"], req["input"]))
        elif op == "answer": r = dict(ok=True, **S.answer(req["choice"]))
        elif op == "grants": r = dict(ok=True, grants=strip(S.grants))
        elif op == "revoke": r = dict(ok=True, revoked=strip(S.revoke(req["target"])))
        elif op == "audit": r = dict(ok=True, records=S.records)
        else: r = dict(ok=False, error=dict(kind="unsupported", message=op))
    r["id"] = rid
    print(json.dumps(r), flush=True)
