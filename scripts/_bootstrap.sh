# Sourced by scripts/serve, scripts/stop-db and scripts/test: create .venv and install the
# project once, with the extras in $1 (comma-separated, e.g. "farm" or "dev,farm").
# Re-running is cheap: pip is skipped while an install with all those extras is newer than
# pyproject.toml (so ./scripts/serve after ./scripts/test installs nothing).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON_BIN="${PYTHON:-python3.11}"
command -v "$PYTHON_BIN" >/dev/null 2>&1 || PYTHON_BIN=python3
if [ ! -x .venv/bin/python ]; then
  "$PYTHON_BIN" -m venv .venv
fi
installed_with() {  # a fresh stamp whose extras include every extra in $1
  local stamp have extra
  for stamp in .venv/.cluck-installed-*; do
    [ -f "$stamp" ] && [ ! pyproject.toml -nt "$stamp" ] || continue
    have=",${stamp##*/.cluck-installed-},"
    for extra in ${1//,/ }; do
      [[ $have == *",$extra,"* ]] || continue 2
    done
    return 0
  done
  return 1
}
if ! installed_with "$1"; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[$1]"
  touch ".venv/.cluck-installed-$1"
fi
export PATH="$ROOT/.venv/bin:$PATH"
