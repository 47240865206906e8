#include <cstdio>
#include "harness/registry.hpp"
int main() { std::printf("%zu variants\n", attnbench::registry().size()); }
