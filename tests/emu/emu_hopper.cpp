// Host twins of the Hopper (sm_90a) PTX building blocks
// (include/attn_emu_hopper_ptx.hpp) on the fiber runtime (emu_fiber.cpp),
// written from the PTX ISA and the CUDA driver API documentation:
//  * mbarrier: state (arrival count, pending arrivals, tx-count, phase) kept
//    here per CTA, keyed by the object's address; errors for use before init,
//    tx-count underflow, arrivals beyond the count; a try_wait that finds its
//    phase incomplete suspends the thread until the barrier changes.
//  * TMA: cuTensorMapEncodeTiled validates as the driver documents and
//    encodes its own layout into the 128 opaque bytes; cp.async.bulk.tensor
//    copies are queued and performed at the end of a scheduler pass (zero
//    fill out of bounds, the map's swizzle on shared addresses), then
//    complete_tx on their mbarrier.
//  * wgmma: warpgroup collectives; mma_async records the operation, the
//    multiplies run when the wait_group that retires its group completes
//    (descriptors decoded by emu_hopper_layout.hpp); f16/bf16 m64nNk16 and
//    e4m3 m64nNk32 (the e4m3 codec of the <cuda_fp8.h> stand-in, which also
//    serves cvt.rn.satfinite.e4m3x2). Checks: a missing
//    wgmma.fence, an async-proxy read of generic writes with no
//    fence.proxy.async since (a shadow of the dynamic shared memory as the
//    async proxy last saw it), a descriptor swizzle other than the one TMA
//    wrote the bytes with, operands outside the launch's dynamic shared
//    memory, groups outstanding at exit, a transposed 8-bit operand.
//  * named barriers, elect.sync, setmaxnreg (uniform, range, multiple of 8,
//    the CTA's 64K registers; an inc waits until decs free enough).
#include <cuda.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "tests/emu/emu_fiber.hpp"
#include "tests/emu/emu_hopper_layout.hpp"
#include "tests/emu/include/attn_emu_hopper_ptx.hpp"

namespace attnbench::emu {
namespace {

void fail(const std::string& what) { report(what.c_str()); }

std::string hex(std::uintptr_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%zx", static_cast<std::size_t>(v));
  return b;
}
// Shared-window address (offset into the dynamic shared memory) or -1.
long smem_offset(const void* p) {
  const auto* q = static_cast<const unsigned char*>(p);
  const unsigned char* b = dynamic_smem_begin();
  return q >= b && q < b + 232448 ? static_cast<long>(q - b) : -1;
}
std::string where(const void* p) {
  const long o = smem_offset(p);
  return o >= 0 ? "shared " + hex(static_cast<std::uintptr_t>(o))
                : "static __shared__ " + hex(reinterpret_cast<std::uintptr_t>(p));
}

// ---- tensor maps ---------------------------------------------------------------------
constexpr std::uint16_t kMapMagic = 0x7e3a;
struct tensor_map {
  int dtype = 0, rank = 0, elem_bytes = 0, interleave = 0, swizzle = 0, l2 = 0, oob = 0;
  const unsigned char* addr = nullptr;
  std::uint64_t dim[5] = {1, 1, 1, 1, 1};
  std::uint64_t stride[5] = {0, 0, 0, 0, 0};  // bytes; stride[0] = element size
  std::uint32_t box[5] = {1, 1, 1, 1, 1};
  std::uint32_t estride[5] = {1, 1, 1, 1, 1};
  std::uint32_t count(int i) const { return (box[i] + estride[i] - 1) / estride[i]; }  // elements loaded along i
  std::uint64_t box_bytes() const {
    std::uint64_t n = static_cast<std::uint64_t>(elem_bytes);
    for (int i = 0; i < rank; ++i) n *= count(i);
    return n;
  }
};
int elem_bytes_of(int dtype) {
  switch (dtype) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: return 1;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: return 2;
    case CU_TENSOR_MAP_DATA_TYPE_UINT32:
    case CU_TENSOR_MAP_DATA_TYPE_INT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: return 4;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: return 8;
  }
  return 0;
}
bool is_float_type(int dtype) {
  return dtype >= CU_TENSOR_MAP_DATA_TYPE_FLOAT16 && dtype <= CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ;
}

// Opaque layout (bytes): 0 magic u16, 2 dtype, 3 rank, 4 interleave, 5 swizzle,
// 6 l2, 7 oob; 8 address; 16 dims[5] u64; 56 strides of dims 1..4 u64;
// 88 box-1 [5] u8; 93 element strides [5] u8; 100 checksum u32.
std::uint32_t map_checksum(const unsigned char* b) {
  std::uint32_t h = 2166136261u;
  for (int i = 0; i < 100; ++i) h = (h ^ b[i]) * 16777619u;
  return h;
}
void encode_map(CUtensorMap* out, const tensor_map& m) {
  unsigned char b[128] = {};
  std::memcpy(b, &kMapMagic, 2);
  b[2] = static_cast<unsigned char>(m.dtype);
  b[3] = static_cast<unsigned char>(m.rank);
  b[4] = static_cast<unsigned char>(m.interleave);
  b[5] = static_cast<unsigned char>(m.swizzle);
  b[6] = static_cast<unsigned char>(m.l2);
  b[7] = static_cast<unsigned char>(m.oob);
  std::memcpy(b + 8, &m.addr, 8);
  std::memcpy(b + 16, m.dim, 40);
  std::memcpy(b + 56, m.stride + 1, 32);
  for (int i = 0; i < 5; ++i) {
    b[88 + i] = static_cast<unsigned char>(m.box[i] - 1);
    b[93 + i] = static_cast<unsigned char>(m.estride[i]);
  }
  const std::uint32_t h = map_checksum(b);
  std::memcpy(b + 100, &h, 4);
  std::memcpy(out->opaque, b, 128);
}
bool decode_map(const CUtensorMap* in, tensor_map& m) {
  unsigned char b[128];
  std::memcpy(b, in->opaque, 128);
  std::uint16_t magic;
  std::uint32_t h;
  std::memcpy(&magic, b, 2);
  std::memcpy(&h, b + 100, 4);
  if (magic != kMapMagic || h != map_checksum(b)) return false;
  m.dtype = b[2];
  m.rank = b[3];
  m.interleave = b[4];
  m.swizzle = b[5];
  m.l2 = b[6];
  m.oob = b[7];
  m.elem_bytes = elem_bytes_of(m.dtype);
  std::memcpy(&m.addr, b + 8, 8);
  std::memcpy(m.dim, b + 16, 40);
  std::memcpy(m.stride + 1, b + 56, 32);
  m.stride[0] = static_cast<std::uint64_t>(m.elem_bytes);
  for (int i = 0; i < 5; ++i) {
    m.box[i] = b[88 + i] + 1u;
    m.estride[i] = b[93 + i];
  }
  return true;
}

// ---- per-CTA state -------------------------------------------------------------------
struct mbarrier_state {
  std::uint32_t count = 0, pending = 0;
  long long tx = 0;
  std::uint64_t phase = 0;  // phases completed
};
struct tma_copy {
  unsigned char* dst;
  tensor_map map;
  long long coord[5];
  std::uint64_t* bar;
  unsigned tid;
};
using attnbench::cuda::f3::wgmma_elem;
struct wgmma_op {
  int n = 0, trans_b = 0, scale_d = 1;
  wgmma_elem type = wgmma_elem::bf16;
  bool rs = false;
  std::uint64_t desc_a = 0, desc_b = 0;
  float* d[128] = {};
  std::uint32_t a[128][4] = {};
};
struct warpgroup_hopper {
  bool fenced = false;
  std::vector<wgmma_op> pending;             // issued, not committed
  std::deque<std::vector<wgmma_op>> groups;  // committed, oldest first
  int regs = 0;                              // setmaxnreg's current count per thread
  int regs_wanted = 0;                       // a setmaxnreg.inc waiting for registers (0: none)
};
std::map<const void*, mbarrier_state> g_mbars;
std::vector<tma_copy> g_tma;
std::vector<warpgroup_hopper> g_wg;
// The dynamic shared memory as the async proxy last saw it (TMA writes, the
// last fence.proxy.async), and per 16-byte chunk the swizzle a TMA wrote it
// with (bits + 1; 0: not written by TMA since the last generic change).
std::vector<unsigned char> g_async_view;
std::vector<unsigned char> g_tma_swizzle;
std::size_t g_view_bytes = 0;
bool g_reported_proxy = false, g_reported_swizzle = false;

mbarrier_state* find_mbar(const void* bar, const char* op) {
  auto it = g_mbars.find(bar);
  if (it == g_mbars.end()) {
    fail(std::string(op) + " on an mbarrier never initialised (mbarrier.init) in this CTA, at " + where(bar));
    return nullptr;
  }
  return &it->second;
}
void maybe_complete(const void* bar, mbarrier_state& s) {
  if (s.pending == 0 && s.tx == 0) {
    ++s.phase;
    s.pending = s.count;
    wake_mbarrier(bar);
  }
  note_progress();
}
void complete_tx(std::uint64_t* bar, std::uint64_t bytes) {
  mbarrier_state* s = find_mbar(bar, "complete_tx (TMA)");
  if (!s) return;
  s->tx -= static_cast<long long>(bytes);
  if (s->tx < 0) {
    fail("mbarrier tx-count underflow at " + where(bar) + ": a TMA completed " + std::to_string(bytes) +
         " bytes in phase " + std::to_string(s->phase) +
         ", more than expected (missing mbarrier.arrive.expect_tx? the phase may have completed early)");
    s->tx = 0;
  }
  maybe_complete(bar, *s);
}

// Generic writes since the last sync: the view takes them, their TMA swizzle tags go.
void sync_view() {
  const unsigned char* smem = dynamic_smem_begin();
  for (std::size_t c = 0; c < g_view_bytes / 16; ++c)
    if (std::memcmp(&g_async_view[16 * c], smem + 16 * c, 16) != 0) {
      std::memcpy(&g_async_view[16 * c], smem + 16 * c, 16);
      g_tma_swizzle[c] = 0;
    }
}

void perform(const tma_copy& c) {
  const tensor_map& m = c.map;
  unsigned char* smem = const_cast<unsigned char*>(dynamic_smem_begin());
  const auto dst = static_cast<std::uint32_t>(smem_offset(c.dst));
  const int eb = m.elem_bytes;
  std::uint32_t n[5];
  for (int i = 0; i < 5; ++i) n[i] = i < m.rank ? m.count(i) : 1;
  std::uint32_t byte = 0;
  const int bits = hopper::tma_swizzle_bits(m.swizzle);
  unsigned char fill[8];
  std::memset(fill, m.oob == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA ? 0xFF : 0, sizeof fill);
  for (std::uint32_t i4 = 0; i4 < n[4]; ++i4)
    for (std::uint32_t i3 = 0; i3 < n[3]; ++i3)
      for (std::uint32_t i2 = 0; i2 < n[2]; ++i2)
        for (std::uint32_t i1 = 0; i1 < n[1]; ++i1)
          for (std::uint32_t i0 = 0; i0 < n[0]; ++i0, byte += static_cast<std::uint32_t>(eb)) {
            const std::uint32_t idx[5] = {i0, i1, i2, i3, i4};
            bool inside = true;
            std::uint64_t off = 0;
            for (int d = 0; d < m.rank; ++d) {
              const long long x = c.coord[d] + static_cast<long long>(idx[d]) * m.estride[d];
              if (x < 0 || static_cast<std::uint64_t>(x) >= m.dim[d])
                inside = false;
              else
                off += static_cast<std::uint64_t>(x) * m.stride[d];
            }
            const std::uint32_t a = hopper::tma_box_address(dst, byte, m.swizzle);
            std::memcpy(smem + a, inside ? m.addr + off : fill, static_cast<std::size_t>(eb));
            std::memcpy(&g_async_view[a], smem + a, static_cast<std::size_t>(eb));
            g_tma_swizzle[a / 16] = static_cast<unsigned char>(bits + 1);
          }
  complete_tx(c.bar, m.box_bytes());
}

// ---- wgmma execution -------------------------------------------------------------------
// K of one instruction and element bytes: m64nNk16 for f16/bf16, m64nNk32 for the 8-bit types.
int k_of(wgmma_elem t) { return t == wgmma_elem::e4m3 ? 32 : 16; }
int bytes_of(wgmma_elem t) { return t == wgmma_elem::e4m3 ? 1 : 2; }
const char* name_of(wgmma_elem t) { return t == wgmma_elem::e4m3 ? ".e4m3" : t == wgmma_elem::bf16 ? ".bf16" : ".f16"; }
// The element at p (little-endian, bytes_of(t) bytes) as a float: exact for every type.
float elem(const unsigned char* p, wgmma_elem t) {
  if (t == wgmma_elem::e4m3) return emu_e4m3_bits_to_float(*p);
  std::uint16_t u;
  std::memcpy(&u, p, 2);
  return t == wgmma_elem::bf16 ? emu_bf16_bits_to_float(u) : emu_half_bits_to_float(u);
}

// Element (mn, k) of a shared-memory operand, with the async-proxy checks.
bool load_operand(const hopper::smem_desc& d, bool k_major, int rows, std::vector<float>& out, wgmma_elem type,
                  const char* name) {
  const unsigned char* smem = dynamic_smem_begin();
  const int want_bits = hopper::swizzle_bits(d.swizzle);
  const int K = k_of(type), eb = bytes_of(type);
  out.assign(static_cast<std::size_t>(rows) * K, 0.f);
  for (int mn = 0; mn < rows; ++mn)
    for (int k = 0; k < K; ++k) {
      const std::uint32_t a = hopper::operand_address(d, k_major, mn, k, eb);
      if (a + eb > g_view_bytes) {
        fail(std::string("wgmma.mma_async operand ") + name + " element (" + std::to_string(mn) + "," +
             std::to_string(k) + ") at shared " + hex(a) + " outside the launch's " + std::to_string(g_view_bytes) +
             " bytes of dynamic shared memory");
        return false;
      }
      if (!g_reported_proxy && std::memcmp(smem + a, &g_async_view[a], eb) != 0) {
        g_reported_proxy = true;
        fail(std::string("wgmma.mma_async (async proxy) reads operand ") + name + " at shared " + hex(a) +
             ", written by generic stores with no fence.proxy.async since");
      }
      const int tag = g_tma_swizzle[a / 16];
      if (!g_reported_swizzle && tag != 0 && tag - 1 != want_bits) {
        g_reported_swizzle = true;
        static const char* names[] = {"none", "32B", "64B", "128B"};
        fail(std::string("wgmma.mma_async operand ") + name + " descriptor swizzle " + names[want_bits] +
             " reads shared " + hex(a) + ", which TMA wrote with swizzle " + names[tag - 1]);
      }
      out[static_cast<std::size_t>(mn) * K + k] = elem(smem + a, type);
    }
  return true;
}

// D = A B (+ D): A 64 x K, B N x K (K-major: B[n][k]), D in the accumulator
// fragment. Products are exact in fp32 for every type here; they are summed
// in fp32 in k order. For e4m3 that is more precise than Hopper is reported
// to be (DeepSeek-V3, arXiv 2412.19437, 3.3.2: fewer accumulator bits); the
// ISA names no precision, so the twin keeps fp32.
void execute(const wgmma_op& op) {
  const int K = k_of(op.type);
  std::vector<float> A(static_cast<std::size_t>(64) * K), B;
  if (op.rs) {
    // The A register fragment (PTX ISA "Register Fragments": m64nNk16 for
    // 16-bit types, two per register; m64nNk32 for 8-bit ones, four per register).
    const int per_reg = 4 / bytes_of(op.type), bits = 8 * bytes_of(op.type);
    for (int t = 0; t < 128; ++t)
      for (int i = 0; i < 4 * per_reg; ++i) {
        const hopper::coord c = K == 32 ? hopper::a_fragment_8bit(t, i) : hopper::a_fragment(t, i);
        const std::uint32_t v = op.a[t][i / per_reg] >> (bits * (i % per_reg));
        unsigned char b[2] = {static_cast<unsigned char>(v), static_cast<unsigned char>(v >> 8)};
        A[static_cast<std::size_t>(c.row) * K + c.col] = elem(b, op.type);
      }
  } else if (!load_operand(hopper::decode_desc(op.desc_a), true, 64, A, op.type, "A")) {
    return;
  }
  if (!load_operand(hopper::decode_desc(op.desc_b), op.trans_b == 0, op.n, B, op.type, "B")) return;
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < op.n / 2; ++i) {
      const hopper::coord c = hopper::d_fragment(t, i);
      float acc = op.scale_d ? op.d[t][i] : 0.f;
      for (int k = 0; k < K; ++k)
        acc += A[static_cast<std::size_t>(c.row) * K + k] * B[static_cast<std::size_t>(c.col) * K + k];
      op.d[t][i] = acc;
    }
}

warpgroup_hopper& my_wg() { return g_wg[current_tid() / 128]; }

// ---- setmaxnreg pool -------------------------------------------------------------------
constexpr int kCtaRegisters = 65536;
int registers_in_use() {
  int total = 0;
  for (const warpgroup_hopper& w : g_wg) total += 128 * w.regs;
  return total;
}
void grant_waiting_increases() {
  for (warpgroup_hopper& w : g_wg)
    if (w.regs_wanted && registers_in_use() - 128 * w.regs + 128 * w.regs_wanted <= kCtaRegisters) {
      w.regs = w.regs_wanted;
      w.regs_wanted = 0;
      wake_mbarrier(&w);
    }
}

}  // namespace

// ---- scheduler hooks ---------------------------------------------------------------------
void hopper_cta_begin(unsigned nthreads) {
  g_mbars.clear();
  g_tma.clear();
  const unsigned nwg = (nthreads + 127) / 128;
  g_wg.assign(nwg, warpgroup_hopper{});
  // Registers before any setmaxnreg: as if built with __launch_bounds__(threads, 1).
  const int initial = std::min(256, kCtaRegisters / static_cast<int>(128 * nwg) / 8 * 8);
  for (warpgroup_hopper& w : g_wg) w.regs = initial;
  g_view_bytes = dynamic_smem_bytes();
  const unsigned char* smem = dynamic_smem_begin();
  g_async_view.assign(smem, smem + g_view_bytes);
  g_tma_swizzle.assign(g_view_bytes / 16 + 1, 0);
  g_reported_proxy = g_reported_swizzle = false;
}

bool hopper_end_of_pass() {
  if (g_tma.empty()) return false;
  runtime_guard rg;
  std::vector<tma_copy> q;
  q.swap(g_tma);
  for (const tma_copy& c : q) perform(c);
  return true;
}

void hopper_cta_end(bool deadlocked) {
  if (deadlocked) return;
  for (std::size_t w = 0; w < g_wg.size(); ++w)
    if (!g_wg[w].pending.empty() || !g_wg[w].groups.empty())
      fail("kernel exits with wgmma.mma_async outstanding in warpgroup " + std::to_string(w) +
           " (no wgmma.wait_group retired them; their accumulators were never written)");
}

std::string hopper_deadlock_detail(unsigned (*waiters)(const void* bar)) {
  std::string s;
  for (const auto& [bar, st] : g_mbars)
    if (unsigned n = waiters(bar)) {
      s += "; mbarrier at " + where(bar) + ": " + std::to_string(n) + " threads wait, phase " +
           std::to_string(st.phase) + " (parity " + std::to_string(st.phase & 1) + ") has " +
           std::to_string(st.pending) + " of " + std::to_string(st.count) + " arrivals pending, tx-count " +
           std::to_string(st.tx);
    }
  for (std::size_t w = 0; w < g_wg.size(); ++w)
    if (unsigned n = waiters(&g_wg[w]))
      s += "; warpgroup " + std::to_string(w) + ": " + std::to_string(n) + " threads wait in setmaxnreg.inc for " +
           std::to_string(g_wg[w].regs_wanted) + " registers (CTA total " + std::to_string(registers_in_use()) +
           " of 65536 in use)";
  return s;
}

}  // namespace attnbench::emu

namespace attnbench::cuda::f3 {
using namespace attnbench::emu;

// ---- mbarrier ------------------------------------------------------------------------------
void mbarrier_init(std::uint64_t* bar, std::uint32_t arrive_count) {
  runtime_guard rg;
  if (!in_shared(bar, 8))
    return fail("mbarrier.init on " + hex(reinterpret_cast<std::uintptr_t>(bar)) + ", not in shared memory");
  if (reinterpret_cast<std::uintptr_t>(bar) % 8) return fail("mbarrier.init on " + where(bar) + ", not 8-byte aligned");
  if (arrive_count == 0 || arrive_count >= (1u << 20))
    return fail("mbarrier.init count " + std::to_string(arrive_count) + " outside [1, 2^20 - 1]");
  mbarrier_state& s = g_mbars[bar];
  s = mbarrier_state{arrive_count, arrive_count, 0, 0};
  note_progress();
}
void fence_mbarrier_init() {}

void mbarrier_arrive_expect_tx(std::uint64_t* bar, std::uint32_t tx_bytes) {
  hb_release(bar);
  runtime_guard rg;
  mbarrier_state* s = find_mbar(bar, tx_bytes ? "mbarrier.arrive.expect_tx" : "mbarrier.arrive");
  if (!s) return;
  if (s->pending == 0)
    return fail("mbarrier at " + where(bar) + ": an arrival beyond the count " + std::to_string(s->count) +
                " in phase " + std::to_string(s->phase) + " (the phase waits only for its tx-count)");
  s->tx += tx_bytes;
  --s->pending;
  maybe_complete(bar, *s);
}
void mbarrier_arrive(std::uint64_t* bar) { mbarrier_arrive_expect_tx(bar, 0); }

bool mbarrier_try_wait_parity(std::uint64_t* bar, std::uint32_t parity) {
  bool done;
  {
    runtime_guard rg;
    const mbarrier_state* s = find_mbar(bar, "mbarrier.try_wait.parity");
    if (!s) return true;
    done = (s->phase & 1) != (parity & 1);
  }
  if (!done) {  // a scheduling point: wait until the barrier changes (or a poll is due)
    block_on_mbarrier(bar);
    runtime_guard rg;
    const mbarrier_state* s = find_mbar(bar, "mbarrier.try_wait.parity");
    done = !s || (s->phase & 1) != (parity & 1);
  }
  if (done) hb_acquire(bar);
  return done;
}

// ---- TMA -------------------------------------------------------------------------------------
namespace {
void tma_load(int rank, void* smem_dst, const CUtensorMap* map, std::uint64_t* bar, const long long* coord) {
  runtime_guard rg;
  tma_copy c{};
  const std::string op = "cp.async.bulk.tensor." + std::to_string(rank) + "d";
  if (!in_kernel_thread()) return fail(op + " outside a kernel");
  if (!map || !decode_map(map, c.map)) return fail(op + ": the tensor map was not made by cuTensorMapEncodeTiled");
  const tensor_map& m = c.map;
  if (m.rank != rank) return fail(op + " with a rank-" + std::to_string(m.rank) + " tensor map");
  if (m.interleave != CU_TENSOR_MAP_INTERLEAVE_NONE) return fail(op + ": interleaved tensor maps are not emulated");
  if (m.swizzle > CU_TENSOR_MAP_SWIZZLE_128B) return fail(op + ": the 128B_ATOM swizzles are not emulated");
  const std::uint32_t inner = m.box[0] * static_cast<std::uint32_t>(m.elem_bytes);
  if (m.swizzle != CU_TENSOR_MAP_SWIZZLE_NONE && inner != (16u << m.swizzle))
    return fail(op + ": inner box of " + std::to_string(inner) + " bytes with a " + std::to_string(16 << m.swizzle) +
                "-byte swizzle (only a box row of exactly the swizzle span is emulated)");
  const long o = smem_offset(smem_dst);
  if (o < 0 || o % 128 != 0)
    return fail(op + ": destination " + hex(reinterpret_cast<std::uintptr_t>(smem_dst)) +
                " not a 128-byte aligned address in the dynamic shared memory");
  if (static_cast<std::uint64_t>(o) + m.box_bytes() > dynamic_smem_bytes())
    return fail(op + ": box of " + std::to_string(m.box_bytes()) + " bytes at shared " +
                hex(static_cast<std::uintptr_t>(o)) + " beyond the launch's " + std::to_string(dynamic_smem_bytes()) +
                " bytes of dynamic shared memory");
  if (!find_mbar(bar, op.c_str())) return;
  c.dst = static_cast<unsigned char*>(smem_dst);
  for (int i = 0; i < 5; ++i) c.coord[i] = i < rank ? coord[i] : 0;
  c.bar = bar;
  c.tid = current_tid();
  g_tma.push_back(c);
  note_progress();
}
}  // namespace

void tma_load_2d(void* dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1) {
  const long long c[2] = {c0, c1};
  tma_load(2, dst, map, bar, c);
}
void tma_load_3d(void* dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1, int c2) {
  const long long c[3] = {c0, c1, c2};
  tma_load(3, dst, map, bar, c);
}
void tma_load_4d(void* dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1, int c2, int c3) {
  const long long c[4] = {c0, c1, c2, c3};
  tma_load(4, dst, map, bar, c);
}
void tma_prefetch_descriptor(const CUtensorMap* map) {
  tensor_map m;
  if (!map || !decode_map(map, m)) fail("prefetch.tensormap: the tensor map was not made by cuTensorMapEncodeTiled");
}

void fence_proxy_async_shared() {
  runtime_guard rg;
  sync_view();
}

// ---- wgmma ------------------------------------------------------------------------------------
void wgmma_fence() {
  warpgroup_exchange(
      wg_fence, nullptr, 0, [](void*, const unsigned char*) { my_wg().fenced = true; }, nullptr);
}

namespace {
struct mma_slot {
  float* d;
  std::uint32_t a[4];
  std::uint64_t desc_a, desc_b;
  std::int32_t n, trans_b, scale_d, flags;  // flags: bits 0-7 the wgmma_elem, 0x100 rs
};
static_assert(sizeof(mma_slot) <= 64);
}  // namespace

void wgmma_any(float* d, int n, const std::uint32_t* a_regs, std::uint64_t desc_a, std::uint64_t desc_b, int trans_b,
               wgmma_elem type, int scale_d) {
  mma_slot mine{};
  mine.d = d;
  if (a_regs) std::memcpy(mine.a, a_regs, sizeof mine.a);  // registers are read at issue
  mine.desc_a = a_regs ? 0 : desc_a;
  mine.desc_b = desc_b;
  mine.n = n;
  mine.trans_b = trans_b;
  mine.scale_d = scale_d;
  mine.flags = (static_cast<int>(type) & 0xFF) | (a_regs ? 0x100 : 0);
  warpgroup_exchange(
      wg_mma, &mine, sizeof mine,
      [](void*, const unsigned char* slots) {
        warpgroup_hopper& w = my_wg();
        mma_slot s0;
        std::memcpy(&s0, slots, sizeof s0);
        for (int t = 1; t < 128; ++t) {
          mma_slot s;
          std::memcpy(&s, slots + 64 * t, sizeof s);
          if (s.desc_a != s0.desc_a || s.desc_b != s0.desc_b || s.n != s0.n || s.trans_b != s0.trans_b ||
              s.scale_d != s0.scale_d || s.flags != s0.flags)
            return fail("wgmma.mma_async operands differ across the warpgroup (thread " + std::to_string(t) +
                        " of the warpgroup: descriptors, shape or flags other than thread 0's)");
        }
        if (s0.n < 8 || s0.n > 256 || s0.n % 8) return fail("wgmma.mma_async with N = " + std::to_string(s0.n));
        const auto type = static_cast<wgmma_elem>(s0.flags & 0xFF);
        if (type != wgmma_elem::f16 && type != wgmma_elem::bf16 && type != wgmma_elem::e4m3)
          return fail("wgmma.mma_async with element type " + std::to_string(s0.flags & 0xFF));
        if (s0.trans_b != 0 && s0.trans_b != 1)
          return fail("wgmma.mma_async with imm-trans-b = " + std::to_string(s0.trans_b) + " (0 or 1)");
        // PTX ISA, wgmma.mma_async: "The transpose operation is only supported for the .f16/.bf16
        // types"; the 8-bit forms have no imm-trans operands, both operands K-major.
        if (type == wgmma_elem::e4m3 && s0.trans_b)
          return fail(std::string("wgmma.mma_async") + name_of(type) +
                      " with B MN-major (imm-trans-b = 1): only .f16/.bf16 operands may be transposed; "
                      "8-bit A and B must be K-major in shared memory");
        if (!w.fenced)
          fail("wgmma.mma_async without a wgmma.fence since the warpgroup's previous wgmma.wait_group (warpgroup " +
               std::to_string(current_tid() / 128) + ")");
        w.fenced = true;  // one report per batch
        wgmma_op op;
        op.n = s0.n;
        op.trans_b = s0.trans_b;
        op.scale_d = s0.scale_d;
        op.type = type;
        op.rs = s0.flags & 0x100;
        op.desc_a = s0.desc_a;
        op.desc_b = s0.desc_b;
        for (int t = 0; t < 128; ++t) {
          mma_slot s;
          std::memcpy(&s, slots + 64 * t, sizeof s);
          op.d[t] = s.d;
          std::memcpy(op.a[t], s.a, sizeof s.a);
        }
        w.pending.push_back(op);
      },
      nullptr);
}

void wgmma_commit_group() {
  warpgroup_exchange(
      wg_commit, nullptr, 0,
      [](void*, const unsigned char*) {
        warpgroup_hopper& w = my_wg();
        w.groups.push_back(std::move(w.pending));
        w.pending.clear();
      },
      nullptr);
}

void wgmma_wait_group_n(int n) {
  const std::int32_t mine = n;
  warpgroup_exchange(
      wg_wait, &mine, sizeof mine,
      [](void*, const unsigned char* slots) {
        warpgroup_hopper& w = my_wg();
        std::int32_t keep;
        std::memcpy(&keep, slots, sizeof keep);
        if (keep < 0 || keep > 7) fail("wgmma.wait_group " + std::to_string(keep) + " (0..7)");
        if (!w.pending.empty()) fail("wgmma.wait_group with uncommitted wgmma.mma_async (they are not waited for)");
        while (static_cast<int>(w.groups.size()) > std::max(keep, 0)) {
          for (const wgmma_op& op : w.groups.front()) execute(op);
          w.groups.pop_front();
        }
        w.fenced = false;
      },
      nullptr);
}

// ---- cvt.rn.satfinite.e4m3x2.f32 d, hi, lo: hi in bits 8-15 (PTX ISA "cvt": d[15:8] = convert(a)) ---------
std::uint16_t cvt_e4m3x2(float hi, float lo) {
  return static_cast<std::uint16_t>((emu_float_to_e4m3_bits(hi) << 8) | emu_float_to_e4m3_bits(lo));
}

// ---- named barriers, elect, setmaxnreg ----------------------------------------------------------
void named_barrier_sync(int id, int nthreads) { named_barrier(id, nthreads, true); }
void named_barrier_arrive(int id, int nthreads) { named_barrier(id, nthreads, false); }

bool elect_one_sync() {
  warp_exchange(op_elect, 0xffffffffu, nullptr, 0);
  return current_lane() == 0;
}

void setmaxnreg_any(int regs, bool increase) {
  const std::int32_t mine[2] = {regs, increase ? 1 : 0};
  warpgroup_exchange(
      wg_setmaxnreg, mine, sizeof mine,
      [](void*, const unsigned char* slots) {
        warpgroup_hopper& w = my_wg();
        std::int32_t r0[2];
        std::memcpy(r0, slots, sizeof r0);
        for (int t = 1; t < 128; ++t) {
          std::int32_t r[2];
          std::memcpy(r, slots + 64 * t, sizeof r);
          if (r[0] != r0[0] || r[1] != r0[1])
            return fail("setmaxnreg not uniform across the warpgroup: thread " + std::to_string(t) + " asks " +
                        (r[1] ? "inc " : "dec ") + std::to_string(r[0]) + ", thread 0 " + (r0[1] ? "inc " : "dec ") +
                        std::to_string(r0[0]));
        }
        const int R = r0[0];
        if (R < 24 || R > 256 || R % 8) return fail("setmaxnreg " + std::to_string(R) + " (24..256, a multiple of 8)");
        if (r0[1] && R < w.regs)
          return fail("setmaxnreg.inc " + std::to_string(R) + " below the current " + std::to_string(w.regs));
        if (!r0[1] && R > w.regs)
          return fail("setmaxnreg.dec " + std::to_string(R) + " above the current " + std::to_string(w.regs));
        if (r0[1]) {
          w.regs_wanted = R;  // granted now or when decs free enough (grant_waiting_increases)
        } else {
          w.regs = R;
        }
        grant_waiting_increases();
      },
      nullptr);
  for (;;) {  // an inc the pool cannot grant yet: wait for a dec (a deadlock report names it)
    bool waiting;
    {
      runtime_guard rg;
      waiting = my_wg().regs_wanted != 0;
    }
    if (!waiting) break;
    block_on_mbarrier(&my_wg());
  }
}

}  // namespace attnbench::cuda::f3

// ---- driver API: cuTensorMapEncodeTiled and the entry points -------------------------------------
namespace {
CUresult invalid(const std::string& why) {
  std::fprintf(stderr, "EMU cuTensorMapEncodeTiled: %s -> CUDA_ERROR_INVALID_VALUE\n", why.c_str());
  return CUDA_ERROR_INVALID_VALUE;
}
}  // namespace

CUresult cuTensorMapEncodeTiled(CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
                                void* globalAddress, const cuuint64_t* globalDim, const cuuint64_t* globalStrides,
                                const cuuint32_t* boxDim, const cuuint32_t* elementStrides,
                                CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill) {
  using attnbench::emu::tensor_map;
  if (!tensorMap) return invalid("tensorMap is null");
  if (reinterpret_cast<std::uintptr_t>(tensorMap) % 64) return invalid("tensorMap not 64-byte aligned");
  if (tensorDataType < CU_TENSOR_MAP_DATA_TYPE_UINT8 || tensorDataType > CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B)
    return invalid("tensorDataType " + std::to_string(tensorDataType));
  if (tensorDataType >= CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B) {
    std::fprintf(stderr, "EMU cuTensorMapEncodeTiled: sub-byte data types are not emulated\n");
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  if (interleave < CU_TENSOR_MAP_INTERLEAVE_NONE || interleave > CU_TENSOR_MAP_INTERLEAVE_32B)
    return invalid("interleave " + std::to_string(interleave));
  if (swizzle < CU_TENSOR_MAP_SWIZZLE_NONE || swizzle > CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B)
    return invalid("swizzle " + std::to_string(swizzle));
  if (l2Promotion < CU_TENSOR_MAP_L2_PROMOTION_NONE || l2Promotion > CU_TENSOR_MAP_L2_PROMOTION_L2_256B)
    return invalid("l2Promotion " + std::to_string(l2Promotion));
  if (oobFill < CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE || oobFill > CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
    return invalid("oobFill " + std::to_string(oobFill));
  if (tensorRank < 1 || tensorRank > 5) return invalid("tensorRank " + std::to_string(tensorRank) + " (1..5)");
  if (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE && tensorRank < 3)
    return invalid("tensorRank " + std::to_string(tensorRank) + " with interleave (>= 3)");
  const auto addr = reinterpret_cast<std::uintptr_t>(globalAddress);
  const unsigned align = interleave == CU_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16;
  if (!globalAddress || addr % align)
    return invalid("globalAddress " + attnbench::emu::hex(addr) + " not " + std::to_string(align) + "-byte aligned");
  if (!globalDim || !boxDim || !elementStrides || (tensorRank > 1 && !globalStrides))
    return invalid("a null array argument");
  tensor_map m;
  m.dtype = tensorDataType;
  m.rank = static_cast<int>(tensorRank);
  m.elem_bytes = attnbench::emu::elem_bytes_of(tensorDataType);
  m.interleave = interleave;
  m.swizzle = swizzle;
  m.l2 = l2Promotion;
  m.oob = oobFill;
  m.addr = static_cast<const unsigned char*>(globalAddress);
  m.stride[0] = static_cast<std::uint64_t>(m.elem_bytes);
  for (int i = 0; i < m.rank; ++i) {
    if (globalDim[i] == 0 || globalDim[i] > (1ull << 32))
      return invalid("globalDim[" + std::to_string(i) + "] = " + std::to_string(globalDim[i]) + " (1..2^32)");
    m.dim[i] = globalDim[i];
    if (boxDim[i] == 0 || boxDim[i] > 256)
      return invalid("boxDim[" + std::to_string(i) + "] = " + std::to_string(boxDim[i]) + " (1..256)");
    m.box[i] = boxDim[i];
    if (elementStrides[i] == 0 || elementStrides[i] > 8)
      return invalid("elementStrides[" + std::to_string(i) + "] = " + std::to_string(elementStrides[i]) + " (1..8)");
    m.estride[i] = elementStrides[i];
  }
  const unsigned smult = interleave == CU_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16;
  for (int i = 0; i + 1 < m.rank; ++i) {
    const cuuint64_t s = globalStrides[i];
    if (s % smult || s >= (1ull << 40))
      return invalid("globalStrides[" + std::to_string(i) + "] = " + std::to_string(s) + " (a multiple of " +
                     std::to_string(smult) + ", < 2^40)");
    m.stride[i + 1] = s;
  }
  if (interleave == CU_TENSOR_MAP_INTERLEAVE_NONE) {
    m.estride[0] = 1;  // the driver ignores elementStrides[0] without interleave
    const std::uint32_t inner = m.box[0] * static_cast<std::uint32_t>(m.elem_bytes);
    if (inner % 16) return invalid("boxDim[0] * element size = " + std::to_string(inner) + " bytes (a multiple of 16)");
    const unsigned span = swizzle == CU_TENSOR_MAP_SWIZZLE_32B    ? 32
                          : swizzle == CU_TENSOR_MAP_SWIZZLE_64B  ? 64
                          : swizzle == CU_TENSOR_MAP_SWIZZLE_NONE ? 0
                                                                  : 128;
    if (span && inner > span)
      return invalid("inner box of " + std::to_string(inner) + " bytes exceeds the " + std::to_string(span) +
                     "-byte swizzle span");
  }
  if (oobFill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA && !attnbench::emu::is_float_type(tensorDataType))
    return invalid("NaN out-of-bounds fill for an integer data type");
  attnbench::emu::encode_map(tensorMap, m);
  return CUDA_SUCCESS;
}

cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** fn, unsigned long long flags,
                                    cudaDriverEntryPointQueryResult* status) {
  return cudaGetDriverEntryPointByVersion(symbol, fn, CUDA_VERSION, flags, status);
}
cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** fn, unsigned int cuda_version,
                                             unsigned long long, cudaDriverEntryPointQueryResult* status) {
  if (!symbol || !fn) return cudaErrorInvalidValue;
  const bool found = std::strcmp(symbol, "cuTensorMapEncodeTiled") == 0;
  const bool new_enough = cuda_version >= 12000;
  *fn = found && new_enough ? reinterpret_cast<void*>(&cuTensorMapEncodeTiled) : nullptr;
  if (status)
    *status = !found       ? cudaDriverEntryPointSymbolNotFound
              : new_enough ? cudaDriverEntryPointSuccess
                           : cudaDriverEntryPointVersionNotSufficent;
  return cudaSuccess;
}

std::size_t __cvta_generic_to_shared(const void* p) {
  const long o = attnbench::emu::smem_offset(p);
  if (o < 0) {
    attnbench::emu::report(("__cvta_generic_to_shared of " + attnbench::emu::hex(reinterpret_cast<std::uintptr_t>(p)) +
                            ": not in the dynamic shared memory (attnbench::cuda::smem_raw)")
                               .c_str());
    return 0;
  }
  return static_cast<std::size_t>(o);
}
