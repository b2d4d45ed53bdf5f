// Where the command line finds its ports and data: relative to its own
// executable, so that a build tree and an install prefix both work.
#pragma once

#include <string>
#include <vector>

namespace seqpack::cli {

struct Port {
  std::string name;     ///< what `seqpack check` prints
  std::string command;  ///< the port's command line (run by /bin/sh -c)
};

struct Paths {
  std::string vectors_dir;  ///< the golden vectors; empty when none were found
  std::vector<Port> ports;  ///< the ports this build or install has, besides the oracle
  std::string source;       ///< where the paths came from, for messages
};

/// `word` as one word of a /bin/sh command line (single quotes, each ' as '\'').
std::string shell_quoted(const std::string& word);

/// In a build tree, `seqpack.paths` next to the executable (CMake writes it)
/// lists the ports and the vectors. In an install, they are found from the
/// executable's directory at the relative paths of the install layout
/// (libexec/seqpack, share/seqpack/vectors).
Paths find_paths(const std::string& self);

}  // namespace seqpack::cli
