#!/usr/bin/env bash
# Writes .gpu/source_commit: the commit this checkout is at, followed by " dirty" when files under lengen/ differ from it.
# The GPU machine gets the working tree without its .git; tools/gpu_env.sh exports this stamp as LENGEN_SOURCE_COMMIT,
# which lengen.io.source_commit reads, so the provenance of every result made there names the commit it ran.
# Run it here, at the repository root, before the calls of a GPU session (after the last commit).
set -euo pipefail
mkdir -p .gpu
state=$(git rev-parse HEAD)
[ -n "$(git status --porcelain -- lengen)" ] && state="$state dirty"
echo "$state" > .gpu/source_commit
echo "stamped .gpu/source_commit: $state"
