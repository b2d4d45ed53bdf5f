// Where the command line finds its ports and data: relative to its own
// executable, so that a build tree and an install prefix both work.
#pragma once

#include <ostream>
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
  std::string original;     ///< the original module (CMake's SEQPACK_ORIGINAL); empty in an install
  std::string source;       ///< where the paths came from, for messages
};

/// `word` as one word of a /bin/sh command line (single quotes, each ' as '\'').
std::string shell_quoted(const std::string& word);

/// In a build tree, `seqpack.paths` next to the executable (CMake writes it)
/// lists the ports and the vectors. In an install, they are found from the
/// executable's directory at the relative paths of the install layout
/// (libexec/seqpack, share/seqpack/vectors).
Paths find_paths(const std::string& self);

/// `seqpack paths [NAME]`: every known path as "NAME PATH" lines, or NAME's
/// path alone; SEQPACK_ORIGINAL in the environment wins over the build's.
/// 1 (saying why on `err`) when NAME's path is unknown or names no file.
int run_paths(const Paths& paths, const std::string& name, std::ostream& out, std::ostream& err);

}  // namespace seqpack::cli
