# Sourced by scripts/test.sh and scripts/fuzz.sh: configures the sanitizer builds with clang 14.
#   build-asan/  AddressSanitizer + UndefinedBehaviorSanitizer, -fno-sanitize-recover=all (any
#                report is fatal), plus libFuzzer's coverage instrumentation so that the fuzz
#                targets (tests/fuzz) link against the same library objects.
#   build-tsan/  ThreadSanitizer.
# -O1 -g keeps reports readable and the build affordable; Debug so NDEBUG is off and the
# kernels' debug shape assertions run too.

configure_asan_build() {
  CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=all" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DATTNLAB_BUILD_BENCH=OFF "$@" > /dev/null
}

configure_tsan_build() {
  CC=clang CXX=clang++ cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=thread" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" \
    -DATTNLAB_BUILD_BENCH=OFF "$@" > /dev/null
}
