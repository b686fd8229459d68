"""What the harness's own bubblewrap confinements share: the agents' (`agents/agent_adapter.
confine`, around an agent the scripted model drives) and the fakes' (`tests/fakes/_gate.
held`, around a command a fake runs unfenced). Each keeps what the suite runs from
touching anything outside the scenario's fixture on the machine running it, often as
root in CI."""

from __future__ import annotations

import os
import shutil
from typing import Optional


def bwrap_for(switch: str, what: str, error: type[Exception]) -> Optional[str]:
    """bubblewrap's path; None where the environment variable `switch` is `0` (a host
    without bubblewrap, whose person turned the confinement off). Without bubblewrap and
    without that switch, `error` naming `what` and the switch: the run fails rather than
    go unconfined."""
    if os.environ.get(switch, "1") == "0":
        return None
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise error("bubblewrap (bwrap) is needed to %s; install it or set %s=0" % (what, switch))
    return bwrap


def own_user_namespace() -> list[str]:
    """bubblewrap's arguments for a user namespace of the confined command's own, its ids
    those of the user running the suite: as root, root there with that namespace's
    capabilities, which reach nothing on the host (the clock, the host's mounts, modules
    and keyrings) but let a bubblewrap inside map root of this namespace (CAP_SETFCAP)."""
    out = ["--unshare-user", "--uid", str(os.geteuid()), "--gid", str(os.getegid())]
    if os.geteuid() == 0:
        out += ["--cap-add", "ALL"]
    return out
