// SnapshotParts: what the registered analyses published into one snapshot, each part
// found by its type (CallSummary, MemorySummary ...). A part is immutable and shared: a
// snapshot copied keeps the same parts, and an analysis whose figures did not change
// hands the same part to the next snapshot. Readers include the header of the part they
// read, not every analysis's.
#pragma once

#include <memory>
#include <typeindex>
#include <utility>
#include <vector>

namespace eacgm::analysis {

class SnapshotParts {
 public:
  template <typename T>
  void put(std::shared_ptr<const T> part) {
    for (Part& p : parts_) {
      if (p.type == typeid(T)) {
        p.value = std::move(part);
        return;
      }
    }
    parts_.push_back(Part{typeid(T), std::move(part), &clone<T>});
  }
  template <typename T>
  void put(T part) {
    put(std::make_shared<const T>(std::move(part)));
  }

  // nullptr when no analysis published a T.
  template <typename T>
  const T* find() const {
    const Part* p = slot(typeid(T));
    return p != nullptr ? static_cast<const T*>(p->value.get()) : nullptr;
  }
  // The part, or an empty T when none was published (a reader's rows are then empty).
  template <typename T>
  const T& get() const {
    if (const T* found = find<T>()) return *found;
    static const T empty{};
    return empty;
  }
  // The part itself, for a reader that keeps it beyond the snapshot.
  template <typename T>
  std::shared_ptr<const T> share() const {
    const Part* p = slot(typeid(T));
    return p != nullptr ? std::static_pointer_cast<const T>(p->value) : nullptr;
  }
  // A part to change (a snapshot made by hand: tests, replays): a copy of the shared one,
  // or a new one.
  template <typename T>
  T& edit() {
    Part* p = slot(typeid(T));
    if (p == nullptr) {
      put(T{});
      p = &parts_.back();
    }
    auto copy = std::static_pointer_cast<T>(p->clone(p->value.get()));
    T& ref = *copy;
    p->value = std::move(copy);
    return ref;
  }

  std::size_t size() const { return parts_.size(); }
  // The types published, in the order they first were.
  std::vector<std::type_index> types() const {
    std::vector<std::type_index> out;
    out.reserve(parts_.size());
    for (const Part& p : parts_) out.push_back(p.type);
    return out;
  }

 private:
  struct Part {
    std::type_index type;
    std::shared_ptr<const void> value;
    std::shared_ptr<void> (*clone)(const void*);
  };
  template <typename T>
  static std::shared_ptr<void> clone(const void* from) {
    return std::make_shared<T>(*static_cast<const T*>(from));
  }
  const Part* slot(std::type_index type) const {
    for (const Part& p : parts_) {
      if (p.type == type) return &p;
    }
    return nullptr;
  }
  Part* slot(std::type_index type) {
    return const_cast<Part*>(static_cast<const SnapshotParts*>(this)->slot(type));
  }

  std::vector<Part> parts_;
};

}  // namespace eacgm::analysis
