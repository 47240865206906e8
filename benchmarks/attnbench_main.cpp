// attnbench: the benchmark binary (docs/cli.md). Everything lives in
// harness/cli.cpp so tests can link it; exit status 2 means bad input.
#include "harness/cli.hpp"

int main(int argc, char** argv) { return attnbench::cli_main(argc, argv); }
