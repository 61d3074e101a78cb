// The history's schema as the build before its description (history/schema.h) made it:
// its literal SQL, version by version (legacy_schema/*.sql, never changed; the versions
// after it written out the same way), which the tests compare the rendered schema with
// and make old stores from.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace eacgm::history::test {

// `dialect` "sqlite" or "postgres": `meta` (made before any step), then each step up to
// `version`.
inline std::string legacy_schema_sql(const std::string& dialect, int version) {
  std::string sql;
  for (int v = 0; v <= version; ++v) {
    const std::string file = std::string(EACGM_SOURCE_DIR) + "/tests/unit/history/legacy_schema/" + dialect +
                             (v == 0 ? "_meta" : "_v" + std::to_string(v)) + ".sql";
    std::ifstream in(file);
    if (!in) ADD_FAILURE() << "cannot read " << file;
    std::stringstream text;
    text << in.rdbuf();
    sql += text.str();
  }
  return sql;
}

}  // namespace eacgm::history::test
