// The views a result carries (PROTOCOL.md, "Views"), private to the
// protocol library: the shards that cp_shards, cp_local and cp_global share;
// more_views, which writes every view beyond the first protocol's
// (views.cpp), and class_of, which names a call's error class (also for
// Built::error_class in implementation.cpp). results.cpp writes a result
// with them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "seqpack/protocol/protocol.hpp"
#include "seqpack/reference/reference.hpp"
#include "writer.hpp"

namespace seqpack::protocol::detail {

/// Whether `views` names the view `v`.
bool wants(const std::vector<std::string>& views, const char* v);

// The error class of `f()`, or "ok".
template <typename F>
std::string class_of(F&& f) {
  try {
    f();
    return "ok";
  } catch (const ref::Error& e) {
    return ref::to_string(e.code());
  }
}

// Every rank's shard of one pack at each world size, made once per result
// and read by cp_shards, cp_local and cp_global (the views only read them).
class Shards {
 public:
  explicit Shards(const Built& b) : b_(b) {}
  struct Set {
    std::vector<std::unique_ptr<Built>> ranks;  // empty when shard refused
    std::optional<ref::Error> refused;          // not_divisible
  };
  // The shards at `world`; an error other than not_divisible is thrown.
  const Set& at(std::int64_t world) {
    auto it = made_.find(world);
    if (it != made_.end()) return it->second;
    Set set;
    try {
      for (std::int64_t r = 0; r < world; ++r) set.ranks.push_back(b_.shard(r, world));
    } catch (const ref::Error& e) {
      if (e.code() != ref::Errc::not_divisible) throw;
      set.ranks.clear();
      set.refused = e;
    }
    return made_.emplace(world, std::move(set)).first->second;
  }

 private:
  const Built& b_;
  std::map<std::int64_t, Set> made_;
};

// The views a result carries beyond the first protocol's, each on a fresh
// build where the view changes the pack.
void more_views(Writer& w, const Implementation& impl, const Built& b, Shards& shards, const protocol::Case& c,
                const ref::Rows& rows, const std::vector<std::string>& views);

}  // namespace seqpack::protocol::detail
