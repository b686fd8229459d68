"""A fake "agent" for the core's tests: asks the scripted model (Anthropic wire) for its
turn, then misbehaves as its first argument says:

  ok        prints one JSON line: {"tool": ..., "input": ...} of the scripted call
  hang      prints to stderr, then sleeps forever (and leaves a child sleeping too)
  crash     prints to stderr and exits 3 without a result
  garbage   prints a line that is not JSON
  tty       opens /dev/tty, as a program waiting on a terminal would
  outside   tries to write the file named by its second argument, then behaves as `ok`
"""

import json
import os
import subprocess
import sys
import time
import urllib.request

mode = sys.argv[1]
body = json.dumps({"stream": False, "tools": [{"name": "Bash"}],
                   "messages": [{"role": "user", "content": "go"}]}).encode()
req = urllib.request.Request(os.environ["FAKE_MODEL_URL"] + "/v1/messages", data=body,
                             method="POST")
answer = json.load(urllib.request.urlopen(req, timeout=10))
call = answer["content"][0]
sys.stderr.write("fake agent: starting in mode %s\n" % mode)
if mode == "hang":
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    sys.stderr.write("fake agent: waiting forever\n")
    sys.stderr.flush()
    time.sleep(600)
elif mode == "crash":
    sys.stderr.write("fake agent: Segmentation fault (pretend)\n")
    sys.exit(3)
elif mode == "garbage":
    print("\x1b[31m*** not JSON at all ***")
    sys.stderr.write("fake agent: printed garbage\n")
elif mode == "tty":
    with open("/dev/tty") as t:
        t.readline()
else:
    if mode == "outside":
        try:
            with open(sys.argv[2], "w") as f:
                f.write("touched\n")
        except OSError as e:
            sys.stderr.write("fake agent: %s\n" % e)
    print(json.dumps({"tool": call["name"], "input": call["input"]}))
