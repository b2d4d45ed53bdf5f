// The seqpack command line.
#include <CLI/CLI.hpp>

#include <iostream>
#include <string>

#include "check.hpp"

int main(int argc, char** argv) {
  CLI::App app{"seqpack: the SequencePack reference and its verification suite"};
  app.set_version_flag("--version", "seqpack 0.1.0");
  app.require_subcommand(1);

  std::string only;
  CLI::App* check = app.add_subcommand("check", "Run the reference over the worked examples and print the packs");
  check->add_option("--example", only, "Run only this example (E1 ... E7)");

  CLI11_PARSE(app, argc, argv);
  if (check->parsed()) return seqpack::cli::run_check(std::cout, only) == 0 ? 0 : 1;
  return 0;
}
