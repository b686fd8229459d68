"""The harness's confinement of the fakes' unfenced commands (`_gate.held`): a fake that runs
a command with no fence still changes the fixture as a missing fence lets it, but not the
machine running the suite (CI runs the fakes as root; a line with an empty `$TMPDIR` had
written `/planted` and `/t` into the host's root)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import unittest

from conformance.tests.fakes._gate import held


@unittest.skipUnless(shutil.which("bwrap"), "bubblewrap is not installed")
class HeldTest(unittest.TestCase):
    def test_the_fixture_is_written_and_the_host_is_not(self) -> None:
        root = tempfile.mkdtemp(prefix="gh-fakes-held-")
        ws = os.path.join(root, "workspace")
        outside = os.path.join(root, "outside")
        os.makedirs(ws)
        os.makedirs(outside)
        host = "/gh-fakes-held-%d" % os.getpid()
        line = ("printf in > mine.txt; printf out > %s/victim; printf host > %s 2>/dev/null "
                "|| echo host-refused; mount -o remount,rw / 2>/dev/null || echo mount-refused"
                % (outside, host))
        try:
            out = subprocess.run(held(["sh", "-c", line], ws), cwd=ws, capture_output=True,
                                 text=True, check=True).stdout
            self.assertFalse(os.path.exists(host), out)
            self.assertIn("host-refused", out)
            self.assertIn("mount-refused", out)
            # The allowed twin: what an unfenced command does to the fixture still happens.
            with open(os.path.join(ws, "mine.txt")) as f:
                self.assertEqual(f.read(), "in")
            with open(os.path.join(outside, "victim")) as f:
                self.assertEqual(f.read(), "out")
        finally:
            shutil.rmtree(root, ignore_errors=True)
            if os.path.exists(host):
                os.remove(host)


if __name__ == "__main__":
    unittest.main()
