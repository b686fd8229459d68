# Everyday recipes. `just --list` shows them.

# The test command CI runs (see README): every test under cargo-nextest, then the doctests.
test *ARGS:
    cargo xtask test {{ARGS}}

# Run the conformance suite against the reference implementation.
conform *ARGS:
    cargo run --release -p gatehouse-conformance -- run {{ARGS}}

# Run the suite against another implementation: just conform-impl 'python3 my_adapter.py'
conform-impl IMPL *ARGS:
    cargo run --release -p gatehouse-conformance -- run --impl '{{IMPL}}' {{ARGS}}

# The example adapter (conformance/examples/python_adapter.py, the gate chapter) against the suite.
conform-example *ARGS:
    cargo build --release -p gatehouse
    cargo run --release -p gatehouse-conformance -- run --impl 'python3 conformance/examples/python_adapter.py' {{ARGS}}

# The enforcement scenarios against the reference's bubblewrap backend.
conform-bwrap:
    cargo build-static
    cargo run --release -p gatehouse-conformance -- run --filter fence/ --impl "env GATEHOUSE_FENCE=bwrap ${CARGO_TARGET_DIR:-target}/x86_64-unknown-linux-gnu/release/gatehouse adapter"

# About 30 suite runs, one per core at once (GATEHOUSE_FAKES_JOBS=N), one line per miss;
# only some rows: GATEHOUSE_FAKES=gate-model,naive-paths just fakes. The fakes that wrap the
# reference run its static build, made first.
#
# The fakes' table (conformance/tests/fakes/fakes.toml): each fake fails the scenarios for its flaw.
fakes:
    cargo build-static
    cargo test --release --locked -p gatehouse-conformance --test fakes_table -- --ignored

# Every MUST and SHOULD in spec/ has a scenario or a written reason.
trace:
    cargo run --release -p gatehouse-conformance -- trace

# Every chapter with the cases under each requirement and each implementation's results,
# from --report LABEL=FILE, reports/peers/ (a fresh run) or docs/reports/ (the kept reports)
# (docs/architecture.md, "The spec as a site").
#
# The spec as a site in target/docs/ (open target/docs/index.html).
docs *ARGS:
    cargo run --release -p gatehouse-conformance -- docs --out target/docs {{ARGS}}

# Validate every scenario file strictly.
lint-suite:
    cargo run --release -p gatehouse-conformance -- lint

# .ci/run runs this same script: format, clippy (also for macOS, where the Seatbelt backend
# lives), no import cycle, the scenario files, the trace, the README's recipe table and the
# workflow files.
#
# Every static check CI makes (.ci/steps/lint.sh).
lint:
    .ci/steps/lint.sh

# Criterion benchmarks (results go in benches/README.md by hand).
bench *ARGS:
    cargo bench -p gatehouse-benches {{ARGS}}

# At the end of a spec version: its checklist frozen with the suite hash, and the
# reference's submission for it (docs/submissions/VERSION/gatehouse/) from a run of the
# whole suite; commit both. --allow-dirty, --force: .ci/release.sh says.
#
# Release the current spec version: freeze its checklist, write the reference's submission.
release *ARGS:
    .ci/release.sh {{ARGS}}

# Everything CI does (.ci/run), the kernel matrix included.
ci:
    ./.ci/run

# Install the pinned versions from Debian, crates.io and npm into target/peers/, then check
# that each fails where its known weakness predicts (the CI step) and run the npm-based ones
# through the suite.
#
# The third-party sandboxes and gates of conformance/adapters/ against the suite.
peers:
    conformance/adapters/install.sh
    .ci/steps/peers.sh
    for a in codex srt; do cargo run --release --locked -q -p gatehouse-conformance -- run --filter fence/ --impl "python3 conformance/adapters/$a/adapter.py" --quiet || true; done
    cargo run --release --locked -q -p gatehouse-conformance -- run --filter gate/ --impl "python3 conformance/adapters/codex_execpolicy/adapter.py" --quiet || true

# Rebuild the implementations table in docs/implementations.md (every column, the whole suite).
peers-table:
    conformance/adapters/install.sh
    conformance/adapters/peers.sh

# Install the four pinned agents from npm into target/peers/agents/, run each headless
# against the suite with a scripted model on 127.0.0.1, and rewrite the agents section of
# docs/implementations.md. Slow (each run starts the agent); narrow it:
# just agents --only claude-code --filter hooks/
#
# The real agents end to end through the suite (conformance/adapters/agents/).
agents *ARGS:
    conformance/adapters/install.sh --agents
    conformance/adapters/agents/run.sh {{ARGS}}

# More: just vm 6.1 --variant userns-off --user root --filter fence/
#
# The suite inside a QEMU guest on one kernel of vm-images/kernels.toml: just vm 6.1
vm KERNEL *ARGS:
    .ci/steps/vm-prereqs.sh
    cargo run --release -p gatehouse-conformance -- vm --kernel {{KERNEL}} {{ARGS}}

# The whole kernel matrix (every kernel, its variants, root and unprivileged), as CI runs it.
matrix *ARGS:
    .ci/steps/vm-matrix.sh --all {{ARGS}}

# Each adapter of conformance/adapters/ inside the kernel matrix's guests (its tool put
# there with --guest-package/--guest-copy), root and unprivileged. Default: bwrap (both
# variants) and the landlock sandboxer on 5.10, 6.1 and 7.3; `just peers-kernels --kernels
# all --impls 'bwrap landlock-sandboxer codex'` for more.
#
# The third-party fences across kernels, into docs/implementations-kernels.md.
peers-kernels *ARGS:
    .ci/steps/vm-prereqs.sh
    conformance/adapters/kernels.sh {{ARGS}}
