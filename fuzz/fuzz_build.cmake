# The fuzz build (TOLLGATE_FUZZ=ON, configured by scripts/fuzz with clang-14): only core/ and fuzz/, every
# object instrumented for libFuzzer's coverage, AddressSanitizer and UBSan. UBSan aborts on the first
# error (-fno-sanitize-recover=all) so the fuzzer sees it as a crash and keeps the input.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "TOLLGATE_FUZZ=ON needs clang (libFuzzer); configure with CXX=clang++-14 (scripts/fuzz does)")
endif()
add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                    -fno-omit-frame-pointer -g)
add_link_options(-fsanitize=address,undefined)
add_subdirectory(core)
add_subdirectory(fuzz)
