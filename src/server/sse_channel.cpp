#include "server/sse_channel.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <list>
#include <mutex>
#include <utility>

namespace eacgm::server {

struct SseClient {
  std::deque<std::shared_ptr<const std::string>> queue;
  std::uint64_t dropped_unreported = 0;
  SseChannel::Filter filter;
  std::chrono::steady_clock::time_point tagged_second{};
  std::size_t tagged_in_second = 0;
};

struct SseChannel::State {
  explicit State(Options o) : options(o) {}
  const Options options;
  mutable std::mutex mutex;
  std::condition_variable wake;
  std::list<SseClient> clients;
  bool closed = false;
  std::uint64_t rejected = 0;
  std::size_t high_water = 0;
  std::uint64_t last_id = 0;                              // of the last untagged event
  std::deque<std::shared_ptr<const std::string>> recent;  // the last untagged events, ids
                                                          // last_id - size + 1 .. last_id
  std::atomic<std::uint64_t> published{0};
  std::atomic<std::uint64_t> dropped{0};
  std::atomic<std::uint64_t> client_count{0};
  std::atomic<std::uint64_t> generation{0};
};

namespace {

class Subscription final : public ResponseStream {
 public:
  Subscription(std::shared_ptr<SseChannel::State> state, std::list<SseClient>::iterator client)
      : state_(std::move(state)), client_(client), last_sent_(std::chrono::steady_clock::now()) {}

  ~Subscription() override {
    std::lock_guard lock(state_->mutex);
    state_->clients.erase(client_);
    state_->client_count.fetch_sub(1, std::memory_order_relaxed);
    state_->generation.fetch_add(1, std::memory_order_release);
  }

  bool next(std::string& out, std::chrono::milliseconds wait) override {
    std::deque<std::shared_ptr<const std::string>> batch;
    std::uint64_t dropped = 0;
    bool ended = false;
    {
      std::unique_lock lock(state_->mutex);
      SseClient& c = *client_;
      state_->wake.wait_for(lock, wait,
                            [&] { return !c.queue.empty() || c.dropped_unreported > 0 || state_->closed; });
      batch.swap(c.queue);
      dropped = std::exchange(c.dropped_unreported, 0);
      ended = state_->closed;
    }
    if (dropped > 0)
      out += SseChannel::format_event("{\"dropped\":" + std::to_string(dropped) + "}", "dropped");
    for (const auto& e : batch) out += *e;
    const auto now = std::chrono::steady_clock::now();
    if (!out.empty()) {
      last_sent_ = now;
    } else if (!ended && now - last_sent_ >= state_->options.keepalive) {
      out += ": keepalive\n\n";
      last_sent_ = now;
    }
    return !ended;
  }

 private:
  std::shared_ptr<SseChannel::State> state_;
  std::list<SseClient>::iterator client_;
  std::chrono::steady_clock::time_point last_sent_;
};

}  // namespace

SseChannel::SseChannel(Options options) {
  options.queue_capacity = std::max<std::size_t>(options.queue_capacity, 1);
  state_ = std::make_shared<State>(options);
}

SseChannel::~SseChannel() { close(); }

std::string SseChannel::format_event(std::string_view data, std::string_view event_type, std::uint64_t id) {
  std::string out;
  out.reserve(data.size() + event_type.size() + 40);
  if (id != 0) {
    out += "id: ";
    out += std::to_string(id);
    out += '\n';
  }
  if (!event_type.empty()) {
    out += "event: ";
    for (char c : event_type) out += (c == '\n' || c == '\r') ? ' ' : c;
    out += '\n';
  }
  // Every line of the data is one data: line; CR, LF and CRLF all end a line.
  std::size_t start = 0;
  for (std::size_t i = 0; i <= data.size(); ++i) {
    if (i == data.size() || data[i] == '\n' || data[i] == '\r') {
      out += "data: ";
      out.append(data.substr(start, i - start));
      out += '\n';
      if (i + 1 < data.size() && data[i] == '\r' && data[i + 1] == '\n') ++i;
      start = i + 1;
    }
  }
  out += '\n';
  return out;
}

namespace {

void enqueue(SseChannel::State& state, SseClient& c, const std::shared_ptr<const std::string>& event);

}  // namespace

void SseChannel::publish(std::string_view data, std::string_view event_type) {
  {
    std::lock_guard lock(state_->mutex);
    if (state_->closed) return;
    auto event = std::make_shared<const std::string>(format_event(data, event_type, ++state_->last_id));
    state_->recent.push_back(event);
    if (state_->recent.size() > state_->options.queue_capacity) state_->recent.pop_front();
    state_->published.fetch_add(1, std::memory_order_relaxed);
    for (auto& c : state_->clients) enqueue(*state_, c, event);
  }
  state_->wake.notify_all();
}

void SseChannel::publish_tagged(std::string_view data, std::string_view event_type, std::uint64_t tag) {
  std::shared_ptr<const std::string> event;
  bool queued = false;
  {
    std::lock_guard lock(state_->mutex);
    if (state_->closed) return;
    const auto now = std::chrono::steady_clock::now();
    for (auto& c : state_->clients) {
      if (!c.filter.tagged || (c.filter.tag && *c.filter.tag != tag)) continue;
      if (now - c.tagged_second >= std::chrono::seconds(1)) {
        c.tagged_second = now;
        c.tagged_in_second = 0;
      }
      if (c.tagged_in_second >= c.filter.max_tagged_per_second) continue;
      ++c.tagged_in_second;
      if (!event) event = std::make_shared<const std::string>(format_event(data, event_type));
      enqueue(*state_, c, event);
      queued = true;
    }
    if (queued) state_->published.fetch_add(1, std::memory_order_relaxed);
  }
  if (queued) state_->wake.notify_all();
}

SseChannel::Interest SseChannel::interest() const {
  std::lock_guard lock(state_->mutex);
  Interest in;
  for (const auto& c : state_->clients) {
    if (!c.filter.tagged) continue;
    if (!c.filter.tag) {
      in.any_tag = true;
    } else if (std::find(in.tags.begin(), in.tags.end(), *c.filter.tag) == in.tags.end()) {
      in.tags.push_back(*c.filter.tag);
    }
  }
  return in;
}

std::uint64_t SseChannel::generation() const { return state_->generation.load(std::memory_order_acquire); }

namespace {

void enqueue(SseChannel::State& state, SseClient& c, const std::shared_ptr<const std::string>& event) {
  if (c.queue.size() >= state.options.queue_capacity) {
    c.queue.pop_front();
    ++c.dropped_unreported;
    state.dropped.fetch_add(1, std::memory_order_relaxed);
  }
  c.queue.push_back(event);
  state.high_water = std::max(state.high_water, c.queue.size());
}

}  // namespace

std::shared_ptr<ResponseStream> SseChannel::subscribe(Filter filter) {
  std::lock_guard lock(state_->mutex);
  if (state_->closed || state_->clients.size() >= state_->options.max_clients) {
    ++state_->rejected;
    return nullptr;
  }
  state_->clients.emplace_back();
  SseClient& c = state_->clients.back();
  c.filter = filter;
  if (filter.last_event_id && *filter.last_event_id < state_->last_id) {
    // Ids kept: last_id - recent.size() + 1 .. last_id; older ones after the client's are lost.
    const std::uint64_t first_kept = state_->last_id - state_->recent.size() + 1;
    const std::uint64_t from = std::max(*filter.last_event_id + 1, first_kept);
    c.dropped_unreported = from - (*filter.last_event_id + 1);
    for (std::uint64_t id = from; id <= state_->last_id; ++id)
      c.queue.push_back(state_->recent[id - first_kept]);
  }
  state_->client_count.fetch_add(1, std::memory_order_relaxed);
  state_->generation.fetch_add(1, std::memory_order_release);
  return std::make_shared<Subscription>(state_, std::prev(state_->clients.end()));
}

void SseChannel::close() {
  {
    std::lock_guard lock(state_->mutex);
    state_->closed = true;
  }
  state_->wake.notify_all();
}

SseChannel::Stats SseChannel::stats() const {
  std::lock_guard lock(state_->mutex);
  Stats s;
  s.clients = state_->clients.size();
  s.published = state_->published.load(std::memory_order_relaxed);
  s.dropped = state_->dropped.load(std::memory_order_relaxed);
  s.rejected = state_->rejected;
  for (const auto& c : state_->clients) s.max_queued = std::max(s.max_queued, c.queue.size());
  s.high_water = state_->high_water;
  return s;
}

const std::atomic<std::uint64_t>& SseChannel::published_total() const { return state_->published; }
const std::atomic<std::uint64_t>& SseChannel::dropped_total() const { return state_->dropped; }
const std::atomic<std::uint64_t>& SseChannel::clients_now() const { return state_->client_count; }

}  // namespace eacgm::server
