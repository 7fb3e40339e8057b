#!/usr/bin/env bash
# Regenerates ../resources/golden/mcrouter-placement.tsv from mcrouter's own hash functions.
# Usage: gen-mcrouter.sh <mcrouter checkout> <folly checkout>   (the vectors in the repository
# came from facebook/mcrouter 9d7f43422b858da05bf699d4c311f236d122792b and facebook/folly
# ff98381ea68687a95c6185326db933aa6124d4c5)
#
# Compiles mcrouter's unmodified mcrouter/lib/fbi/hash.c, Ch3HashFunc.h, Crc32HashFunc.h,
# WeightedCh3HashFunc.h/.cpp, WeightedChHashFuncBase.h, HashUtil.h and folly's unmodified
# folly/hash/SpookyHashV2.h/.cpp with gen-mcrouter-placement.cpp. Only the headers they include
# for types and macros are stubbed below (no algorithm is): folly's StringPiece and Range (data,
# size, indexing), the portability macros (x86-64: unaligned access allowed), folly::dynamic
# (only named in a constructor the harness does not use) and mcrouter's checkLogic.
set -euo pipefail
mcrouter=$(cd "$1" && pwd)
folly=$(cd "$2" && pwd)
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/mcrouter/lib/fbi/cpp" "$work/src/folly/hash" "$work/src/folly/lang" \
  "$work/src/folly/json"
for f in fbi/hash.c fbi/hash.h fbi/decls.h Ch3HashFunc.h Crc32HashFunc.h WeightedCh3HashFunc.h \
  WeightedCh3HashFunc.cpp WeightedChHashFuncBase.h HashFunctionType.h HashUtil.h; do
  cp "$mcrouter/mcrouter/lib/$f" "$work/src/mcrouter/lib/$f"
done
cp "$folly/folly/hash/SpookyHashV2.h" "$folly/folly/hash/SpookyHashV2.cpp" "$work/src/folly/hash/"
cat > "$work/src/folly/Range.h" <<'H'
#pragma once
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>
namespace folly {
class StringPiece {
 public:
  StringPiece(const char* s) : b_(s), e_(s + std::strlen(s)) {}
  StringPiece(const char* b, size_t n) : b_(b), e_(b + n) {}
  StringPiece(const char* b, const char* e) : b_(b), e_(e) {}
  const char* data() const { return b_; }
  size_t size() const { return size_t(e_ - b_); }
 private:
  const char* b_;
  const char* e_;
};
template <class Iter>
class Range {
 public:
  template <class C>
  Range(const C& c) : b_(c.data()), e_(c.data() + c.size()) {}
  size_t size() const { return size_t(e_ - b_); }
  decltype(auto) operator[](size_t i) const { return b_[i]; }
 private:
  Iter b_;
  Iter e_;
};
} // namespace folly
H
printf '#pragma once\n#define FOLLY_ALWAYS_INLINE inline __attribute__((__always_inline__))\n' \
  > "$work/src/folly/CPortability.h"
printf '#pragma once\nnamespace folly { constexpr bool kHasUnalignedAccess = true; }\n' \
  > "$work/src/folly/Portability.h"
printf '#pragma once\n#define FOLLY_BUILTIN_MEMCPY(d, s, n) __builtin_memcpy(d, s, n)\n' \
  > "$work/src/folly/lang/CString.h"
printf '#pragma once\nnamespace folly { struct dynamic {}; }\n' > "$work/src/folly/json/dynamic.h"
cat > "$work/src/mcrouter/lib/fbi/cpp/util.h" <<'H'
#pragma once
#include <limits>
#include <stdexcept>
#define FOLLY_LIKELY(x) __builtin_expect(!!(x), 1)
namespace facebook::memcache {
template <class... Args>
void checkLogic(bool ok, const char* what, Args&&...) {
  if (!ok) throw std::logic_error(what);
}
} // namespace facebook::memcache
H
gcc -O2 -c -I"$work/src" -o "$work/hash.o" "$work/src/mcrouter/lib/fbi/hash.c"
g++ -std=c++17 -O2 -I"$work/src" -o "$work/gen" gen-mcrouter-placement.cpp \
  "$work/src/mcrouter/lib/WeightedCh3HashFunc.cpp" "$work/src/folly/hash/SpookyHashV2.cpp" \
  "$work/hash.o"
cat keys.txt keys-utf8.txt | "$work/gen" > ../resources/golden/mcrouter-placement.tsv
