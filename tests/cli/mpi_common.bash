# Sourced by tests/cli/mpi_*.sh (not a test itself: ctest runs *.sh): skip
# without MPI, and `mpi K CMD...` runs CMD on K ranks of one machine.
if [[ "${GPNSCOPE_WITH_MPI:-OFF}" != ON ]]; then echo "skip: this build has no MPI (install libopenmpi-dev, reconfigure)"; exit 77; fi
mpirun="${GPNSCOPE_MPIEXEC:-mpirun}"
command -v "$mpirun" >/dev/null || { echo "skip: no $mpirun"; exit 77; }
# CI runs as root; -q keeps Open MPI's banners out of the one-line messages;
# LeakSanitizer (the ASan build) would report Open MPI's own allocations at MPI_Init
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
mpi() { local k="$1"; shift; "$mpirun" -q --oversubscribe --allow-run-as-root -n "$k" "$@"; }
