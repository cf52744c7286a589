#!/usr/bin/env bash
# Build the documentation site, strictly and offline.
#
#   docs/build.sh [SITE_DIR]      (default: site/ at the repository root)
#
# Needs the docs extra: pip install -e '.[docs]' (Python 3.11+).
# PYTHON selects the interpreter (default: python on PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
export NO_MKDOCS_2_WARNING=1  # Material's banner about MkDocs 2.0
exec "${PYTHON:-python}" -m mkdocs build --strict --site-dir "${1:-site}"
