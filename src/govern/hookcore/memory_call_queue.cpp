// MemoryCallQueue (hookcore/memory_call_queue.h): a bounded multi-producer queue whose
// cells carry the turn they are on.
#include "govern/hookcore/memory_call_queue.h"

namespace eacgm::govern {

bool MemoryCallQueue::push(const MemoryCall& call) {
  std::uint64_t position = pushed_.load(std::memory_order_relaxed);
  for (;;) {
    Cell& cell = cells_[position & kMask];
    const std::uint64_t free_turn = position - (position & kMask);
    const std::uint64_t turn = cell.turn.load(std::memory_order_acquire);
    if (turn == free_turn) {
      if (pushed_.compare_exchange_weak(position, position + 1, std::memory_order_relaxed)) {
        cell.call = call;
        cell.turn.store(free_turn + 1, std::memory_order_release);
        return true;
      }
      // `position` was reloaded by the failed exchange.
    } else if (turn < free_turn) {
      // The cell still holds the call of `position - kCapacity`: full.
      refused_.fetch_add(1, std::memory_order_relaxed);
      return false;
    } else {
      position = pushed_.load(std::memory_order_relaxed);  // another thread took it
    }
  }
}

const MemoryCall* MemoryCallQueue::front() const {
  const Cell& cell = cells_[popped_ & kMask];
  const std::uint64_t written_turn = popped_ - (popped_ & kMask) + 1;
  return cell.turn.load(std::memory_order_acquire) == written_turn ? &cell.call : nullptr;
}

void MemoryCallQueue::pop() {
  Cell& cell = cells_[popped_ & kMask];
  // Free for the push kCapacity positions on.
  cell.turn.store(popped_ + kCapacity - (popped_ & kMask), std::memory_order_release);
  ++popped_;
}

}  // namespace eacgm::govern
