# Sourced by scripts/test.sh and scripts/fuzz.sh: configures the sanitizer builds with clang 14.
#   build-asan/  AddressSanitizer + UndefinedBehaviorSanitizer, -fno-sanitize-recover=all (any
#                report is fatal), plus libFuzzer's coverage instrumentation so that the fuzz
#                targets (tests/fuzz) link against the same library objects.
#   build-tsan/  ThreadSanitizer.
# -O1 with line tables keeps reports readable (a report's stack trace needs only file and line)
# and the build affordable; Debug so NDEBUG is off and the kernels' debug shape assertions run too.
# The kernel tables (src/kernels/arch_*.cpp) leave out two UBSan checks, pointer-overflow and
# object-size: they instantiate every kernel fully unrolled per instruction set, each of those
# checks about doubles their compile time (the longest of the build), and every access through
# those pointers is checked against its allocation by AddressSanitizer all the same.
# The GoogleTest suite's own code (inputs, reference loops, assertions) compiles at -O0 and
# without libFuzzer's coverage instrumentation, which only the library and the fuzz targets
# need: still sanitized, at well under half its compile time at -O1. The library it tests, where
# the time goes when the tests run, stays at -O1.

configure_asan_build() {
  CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG= \
    -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only -fno-omit-frame-pointer -fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=all" \
    -DATTNLAB_KERNEL_TABLE_OPTIONS=-fno-sanitize=pointer-overflow,object-size -DATTNLAB_TEST_TIMEOUT=1800 \
    "-DATTNLAB_TEST_COMPILE_OPTIONS=-O0;-fno-sanitize=fuzzer-no-link" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DATTNLAB_BUILD_BENCH=OFF "$@" > /dev/null
}

configure_tsan_build() {
  CC=clang CXX=clang++ cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG= \
    -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only -fno-omit-frame-pointer -fsanitize=thread" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" \
    -DATTNLAB_BUILD_BENCH=OFF "$@" > /dev/null
}
