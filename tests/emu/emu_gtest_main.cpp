// main() of the emulator's GoogleTest binaries. With ATTN_EMU_EXIT_ON_FAILURE
// set (the negative controls, tests/emu/negative_controls.cmake) the process
// exits with status 1 at the first failed expectation: a planted defect is
// detected as soon as one case notices it, instead of after every case.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

namespace {
class exit_on_failure : public ::testing::EmptyTestEventListener {
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed()) return;
    std::printf("%s:%d: %s\nATTN_EMU_EXIT_ON_FAILURE: stopping at the first failure\n",
                r.file_name() ? r.file_name() : "?", r.line_number(), r.summary());
    std::fflush(stdout);
    std::_Exit(1);
  }
};
}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (std::getenv("ATTN_EMU_EXIT_ON_FAILURE"))
    ::testing::UnitTest::GetInstance()->listeners().Append(new exit_on_failure);
  return RUN_ALL_TESTS();
}
