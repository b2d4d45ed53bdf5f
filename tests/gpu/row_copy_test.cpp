// The device's row copy (gpu/src/row_copy.cuh) run on the host: every row
// width and alignment, each vector width, gather and scatter, compared byte
// for byte with one memcpy per row, and nothing written outside the rows. Also
// the CPP build's non-temporal store path (row copies of 16 MiB and more)
// against the reference, through the public API.
#include "row_copy.cuh"

#include <cstdint>
#include <cstring>
#include <numeric>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "seqpack/gpu/pack.hpp"
#include "seqpack/gpu/testing.hpp"
#include "seqpack/reference/reference.hpp"

namespace {

namespace ref = seqpack::reference;
namespace gpu = seqpack::gpu;
namespace detail = seqpack::gpu::detail;

// The lowest set bit of x (x > 0): what vector_width must return, capped at 16.
std::size_t low_bit(std::uintptr_t x) { return static_cast<std::size_t>(x & (~x + 1)); }

TEST(RowCopy, VectorWidthIsTheWidestThatDividesTheWidthAndBothBases) {
  for (std::size_t width = 1; width <= 2048; ++width) {
    for (std::uintptr_t s = 0; s < 32; ++s) {
      for (std::uintptr_t d = 0; d < 32; d += 3) {
        const std::uintptr_t src = 4096 + s, dst = 8192 + d;
        const std::size_t want =
            std::min<std::size_t>(16, std::min(low_bit(width), std::min(low_bit(src), low_bit(dst))));
        ASSERT_EQ(detail::vector_width(width, src, dst), want) << "width " << width << " src " << s << " dst " << d;
      }
    }
  }
}

// Runs RowChunkCopy<V> over every work item of `rows` rows, as the device's
// for_each does (the order does not matter: each item writes its own bytes).
template <std::size_t V>
void run(const unsigned char* src, unsigned char* dst, const std::int32_t* map, std::size_t rows, std::size_t width,
         bool scatter) {
  const detail::RowChunkCopy<V> copy = detail::row_chunk_copy<V>(src, dst, map, width, scatter);
  for (std::size_t k = rows * (width / V); k-- > 0;) copy(k);  // backwards: no reliance on order
}

void run_any(std::size_t v, const unsigned char* src, unsigned char* dst, const std::int32_t* map, std::size_t rows,
             std::size_t width, bool scatter) {
  switch (v) {
    case 16:
      return run<16>(src, dst, map, rows, width, scatter);
    case 8:
      return run<8>(src, dst, map, rows, width, scatter);
    case 4:
      return run<4>(src, dst, map, rows, width, scatter);
    case 2:
      return run<2>(src, dst, map, rows, width, scatter);
    default:
      return run<1>(src, dst, map, rows, width, scatter);
  }
}

// Copies 5 rows of `width` bytes through a permutation, the source at
// `src_off` and the destination at `dst_off` bytes past a 64-byte boundary,
// with vector width v; expects one memcpy per row and untouched guards.
void check_copy(std::size_t width, std::size_t src_off, std::size_t dst_off, bool scatter, std::size_t v) {
  const std::size_t rows = 5, bytes = rows * width;
  const std::vector<std::int32_t> map = {3, 0, 4, 1, 2};
  alignas(64) static unsigned char src_mem[5 * 2048 + 128];
  alignas(64) static unsigned char dst_mem[5 * 2048 + 128];
  static std::vector<unsigned char> guard(sizeof(dst_mem), 0xEE);
  for (std::size_t i = 0; i < 64 + 16 + bytes; ++i) src_mem[i] = static_cast<unsigned char>(i * 131 + width);
  std::memset(dst_mem, 0xEE, sizeof(dst_mem));
  const unsigned char* src = src_mem + 64 + src_off;
  unsigned char* dst = dst_mem + 64 + dst_off;
  run_any(v, src, dst, map.data(), rows, width, scatter);
  std::vector<unsigned char> want(bytes);
  for (std::size_t i = 0; i < rows; ++i) {
    const std::size_t s = scatter ? i : static_cast<std::size_t>(map[i]);
    const std::size_t d = scatter ? static_cast<std::size_t>(map[i]) : i;
    std::memcpy(want.data() + d * width, src + s * width, width);
  }
  ASSERT_EQ(std::memcmp(dst, want.data(), bytes), 0)
      << "width " << width << " src +" << src_off << " dst +" << dst_off << " V " << v << (scatter ? " scatter" : "");
  const std::size_t before = static_cast<std::size_t>(dst - dst_mem), after = sizeof(dst_mem) - before - bytes;
  ASSERT_EQ(std::memcmp(dst_mem, guard.data(), before), 0) << "written before the rows, width " << width;
  ASSERT_EQ(std::memcmp(dst + bytes, guard.data(), after), 0) << "written past the rows, width " << width << " V " << v;
}

TEST(RowCopy, EveryWidthAndAlignmentCopiesTheRowsExactly) {
  std::vector<std::size_t> widths(64);
  std::iota(widths.begin(), widths.end(), 1);
  for (const std::size_t w : {96, 100, 128, 255, 256, 257, 512, 1000, 1020, 1024, 2048}) widths.push_back(w);
  std::set<std::size_t> used;
  for (const std::size_t width : widths) {
    for (std::size_t so = 0; so < 16; ++so) {
      for (std::size_t dof = 0; dof < 16; ++dof) {
        const std::size_t v = detail::vector_width(width, 64 + so, 64 + dof);
        used.insert(v);
        for (const bool scatter : {false, true}) check_copy(width, so, dof, scatter, v);
        if (testing::Test::HasFatalFailure()) return;
      }
    }
  }
  EXPECT_EQ(used, (std::set<std::size_t>{1, 2, 4, 8, 16}));
}

TEST(RowCopy, EveryNarrowerVectorWidthGivesTheSameBytes) {
  // Widths 4, 12, 32, 256 and 1024 at aligned bases: each V that divides them.
  for (const std::size_t width : {4, 12, 32, 256, 1024}) {
    for (std::size_t v = 1; v <= 16; v *= 2) {
      if (width % v == 0) {
        for (const bool scatter : {false, true}) check_copy(width, 0, 0, scatter, v);
      }
    }
  }
}

// One sample whose full stream is 17,000 rows of 1024 bytes (17 MB, past the
// CPP build's 16 MiB threshold of non-temporal stores): build_pack (a gather),
// get_all_seq (a scatter) and from_all_seq against the reference, with each
// row copy.
TEST(RowCopy, LargeCopiesMatchTheReference) {
  ref::Layout l{{17012}, {12, 17000}, {"causal", "full"}, {}};
  l.und_token_indexes = ref::packer_und_tokens(l);
  ref::Rows rows(17012, 1024);
  for (std::size_t i = 0; i < rows.size_bytes(); ++i) rows.data()[i] = static_cast<std::byte>(i * 2654435761u >> 13);
  ref::GraphMarks rm, gm;
  const ref::Pack r = ref::build_pack(rows, l, ref::Options{}, rm);
  for (const bool chunked : {false, true}) {
    gpu::set_chunked_row_copy(chunked);
    gpu::set_poison(0xA5);
    const gpu::DevicePack g = gpu::build_pack(gpu::to_device(rows), l, ref::Options{}, gm);
    EXPECT_TRUE(gpu::to_host(g.full_only_seq) == r.full_only_seq) << "chunked " << chunked;
    EXPECT_TRUE(gpu::to_host(g.causal_seq) == r.causal_seq) << "chunked " << chunked;
    EXPECT_TRUE(gpu::to_host(gpu::get_all_seq(g)) == rows) << "chunked " << chunked;
    EXPECT_TRUE(gpu::to_host(gpu::from_all_seq(gpu::to_device(rows), g).full_only_seq) == r.full_only_seq);
  }
  gpu::set_chunked_row_copy(false);
  gpu::set_poison(-1);
}

// A buffer's byte count past size_t is refused before anything is allocated.
TEST(DeviceBuffer, ByteCountPastSizeTIsRefused) {
  EXPECT_THROW(gpu::DeviceBuffer<std::int64_t>(SIZE_MAX / 4), std::length_error);
  const gpu::DeviceBuffer<std::int64_t> none(0);
  EXPECT_TRUE(none.empty());
  EXPECT_TRUE(gpu::to_host_vector(none).empty());
}

}  // namespace
