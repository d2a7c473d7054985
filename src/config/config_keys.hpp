#pragma once
// Every configuration key in one table: its type, default, allowed values or range, and the
// line that documents it. The table drives the default tree, the typing of YAML and --set values,
// the range and choice checks with their messages, and configs/default.yaml (a test checks that
// the file is what default_config_yaml() writes). Adding a key: one row here, one field in
// include/mmprof/config.hpp, one line in resolve_config() (config.cpp) to copy it into the field.
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace mmprof::config {

enum class KeyType {
  integer,  // within [min, max]
  number,   // finite, within [min, max]
  boolean,
  text,    // any string
  choice,  // one of `choices`
  path,    // a string or null
};

struct KeySpec {
  std::string_view key;  // dotted: "loader.num_workers"
  KeyType type;
  nlohmann::json default_value;
  std::vector<std::string> choices;  // KeyType::choice, in the order messages list them
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  // An integer that may also be the word "env": resolved from this environment variable.
  std::string_view env;
  std::string_view doc;  // the comment after the key in configs/default.yaml ("" for none)
  // The PyTorch DataLoader argument the key is for a user's job (`--set loader.num_workers=4
  // -- python train.py`); "" when only mmprof's own loader has it.
  std::string_view dataloader;
};

// In file order: section by section as configs/default.yaml lists them.
const std::vector<KeySpec>& key_table();
// The row of `dotted`, or nullptr.
const KeySpec* find_key(std::string_view dotted);
// The keys a user's job takes (their `dataloader` argument), in table order: "loader.num_workers".
std::vector<std::string_view> dataloader_keys();

// The comment after a section's name in configs/default.yaml ("" for none).
std::string_view section_doc(std::string_view section);

// configs/default.yaml as the table writes it.
std::string default_config_yaml();

// What a key takes, as `mmprof inspect --keys` and the shell completions show it: "auto | files
// | tar", "true | false", "integer in [0, 1024]", "number >= 0", "text", "path or null".
std::string key_values(const KeySpec& k);
// Every key, one line each in table order: KEY<TAB>VALUES<TAB>DEFAULT<TAB>MEANING.
std::string key_list_text();

}  // namespace mmprof::config
