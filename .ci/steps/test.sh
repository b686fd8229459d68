#!/usr/bin/env bash
# The README's test command as CI runs it: `cargo xtask test` under the `ci` profile of
# .config/nextest.toml (the same run, plus target/nextest/ci/junit.xml, from which xtask
# counts the skipped tests apart from the passed ones). A missing bubblewrap fails the bwrap
# backend's tests instead of skipping them. GATEHOUSE_TEST_LANDLOCK_ABI, when the caller
# sets it, makes a kernel with another Landlock ABI fail the tests that adapt to it.
# `.ci/run` and the workflow's Linux test job both run this script.
set -euo pipefail
cd "$(dirname "$0")/../.."
export NEXTEST_PROFILE=ci GATEHOUSE_TEST_BWRAP=1
exec cargo xtask test "$@"
