# Shared by the GPU round scripts (sourced): bench/common.sh's scratch folder and helpers.
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/common.sh"
