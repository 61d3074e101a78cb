// Token hand-over, billing and priority (see token_scheduler.h).
#include "govern/sched/token_scheduler.h"

#include <algorithm>
#include <limits>

namespace eacgm::govern::sched {

GpuScheduler::GpuScheduler(Micros window, Micros min_slice, Micros max_slice)
    : window_(window), min_slice_(min_slice), max_slice_(max_slice) {}

void GpuScheduler::configure(const std::vector<TenantShare>& tenants, Micros window, Micros min_slice,
                             Micros max_slice) {
  window_ = window;
  min_slice_ = min_slice;
  max_slice_ = max_slice;
  std::map<std::string, Tenant> next;
  for (const TenantShare& s : tenants) {
    auto old = tenants_.find(s.name);
    Tenant t = old != tenants_.end() ? std::move(old->second) : Tenant{};
    t.share = s;
    t.usage.set_window(window);
    next.emplace(s.name, std::move(t));
  }
  tenants_ = std::move(next);
  // Requests of tenants that are gone wait no longer (their clients are refused anew).
  std::erase_if(waiting_, [&](const Waiter& w) { return tenants_.count(w.tenant) == 0; });
  if (held_ && tenants_.count(holder_) == 0) held_ = false;
}

void GpuScheduler::request(ClientId client, const std::string& tenant, std::uint32_t used_us,
                           std::uint32_t predicted_us, Micros now, std::vector<Grant>* out) {
  auto t = tenants_.find(tenant);
  if (t == tenants_.end()) return;
  // Overrun: the client's GPU work went on past its slice (the hook waits for it before
  // asking again). That time was the GPU's, so it is billed.
  if (auto s = slices_.find(client); s != slices_.end()) {
    Micros done = std::min(s->second.granted_at + static_cast<Micros>(used_us), now);
    if (done > s->second.ends_at) t->second.usage.add(s->second.ends_at, done);
    slices_.erase(s);
  }
  t->second.last_request = now;
  tick(now, out);
  // Another process of the holding tenant (or a renewal) shares the running slice if
  // enough of it is left for the burst it expects.
  if (held_ && holder_ == tenant && slice_end_ - now >= std::max<Micros>(min_slice_, predicted_us)) {
    slices_[client] = {now, slice_end_, tenant};
    out->push_back({client, static_cast<std::uint32_t>(slice_end_ - now)});
    return;
  }
  auto w =
      std::find_if(waiting_.begin(), waiting_.end(), [&](const Waiter& x) { return x.client == client; });
  if (w == waiting_.end()) waiting_.push_back({client, tenant, predicted_us, now});
  // A holder whose client asks again with too little left hands the token back now,
  // unless other processes of it still run work in the slice.
  if (held_ && holder_ == tenant && !holder_draining()) release_token(now);
  dispatch(now, out);
}

void GpuScheduler::drop_client(ClientId client, Micros now, std::vector<Grant>* out) {
  std::erase_if(waiting_, [&](const Waiter& w) { return w.client == client; });
  slices_.erase(client);
  tick(now, out);
}

void GpuScheduler::tick(Micros now, std::vector<Grant>* out) {
  // Past the slice the holder's queued work may still run: hand the token on when it has
  // drained (every process of the holder reported back) or the grace period is over.
  // With nobody waiting, the slice just ends (its overrun is billed when reported).
  if (held_ && now >= slice_end_ &&
      (waiting_.empty() || !holder_draining() || now >= slice_end_ + max_slice_))
    release_token(now);
  dispatch(now, out);
}

bool GpuScheduler::holder_draining() const {
  return std::any_of(slices_.begin(), slices_.end(),
                     [&](const auto& s) { return s.second.tenant == holder_; });
}

void GpuScheduler::release_token(Micros now) {
  if (!held_) return;
  auto t = tenants_.find(holder_);
  if (t != tenants_.end()) t->second.usage.add(grant_start_, std::min(now, slice_end_));
  held_ = false;
}

void GpuScheduler::dispatch(Micros now, std::vector<Grant>* out) {
  if (!held_ && !waiting_.empty()) {
    // The waiting tenant furthest below its request; tenants without a request come
    // after all that have one, least used first; none at or over its limit.
    const std::string* best = nullptr;
    double best_key = std::numeric_limits<double>::infinity();
    for (const Waiter& w : waiting_) {
      Tenant& t = tenants_.at(w.tenant);
      double share = t.usage.share(now);
      if (share >= t.share.limit) continue;
      double key = t.share.request > 0 ? share / t.share.request : 1e6 + share;
      if (key < best_key) {
        best_key = key;
        best = &w.tenant;
      }
    }
    if (best != nullptr) grant_to(std::string(*best), now, out);
  }
  update_deadline(now);
}

void GpuScheduler::grant_to(const std::string& tenant, Micros now, std::vector<Grant>* out) {
  Tenant& t = tenants_.at(tenant);
  // Slices in proportion to the requests of the tenants active over the window: two busy
  // tenants that take turns then get GPU time in the ratio of their requests, whichever
  // of them happens to be waiting when the token frees. The most active request gets
  // max_slice.
  double top_request = 0, sum_request = 0, sum_busy = 0;
  for (auto& [name, other] : tenants_) {
    if (other.last_request <= now - window_ && name != tenant) continue;
    top_request = std::max(top_request, other.share.request);
    sum_request += other.share.request;
    sum_busy += static_cast<double>(other.usage.busy(now));
  }
  // Work queued before a slice ends runs past it (the overrun is billed), so turns alone
  // drift from the requests; the slice is corrected by how far the tenant's part of the
  // billed time is from its part of the requests.
  double correction = 1;
  double busy = static_cast<double>(t.usage.busy(now));
  if (sum_busy > 0 && sum_request > 0 && t.share.request > 0) {
    double wanted = t.share.request / sum_request;
    double got = busy / sum_busy;
    correction = std::clamp(wanted / std::max(got, 1e-3), 0.25, 4.0);
  }
  Micros slice = min_slice_;
  if (t.share.request > 0 && top_request > 0)
    slice = static_cast<Micros>(static_cast<double>(max_slice_) * t.share.request / top_request * correction);
  slice = std::clamp(slice, min_slice_, max_slice_);
  // Not past the limit within the window.
  Micros allowed = static_cast<Micros>(t.share.limit * static_cast<double>(window_)) - t.usage.busy(now);
  slice = std::min(slice, std::max(allowed, min_slice_));
  held_ = true;
  holder_ = tenant;
  grant_start_ = now;
  slice_end_ = now + slice;
  ++t.grants;
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (it->tenant != tenant) {
      ++it;
      continue;
    }
    t.wait_total += now - it->since;
    slices_[it->client] = {now, slice_end_, tenant};
    out->push_back({it->client, static_cast<std::uint32_t>(slice)});
    it = waiting_.erase(it);
  }
}

void GpuScheduler::update_deadline(Micros now) {
  if (held_) {
    deadline_ = slice_end_;
    if (now >= slice_end_) deadline_ = slice_end_ + max_slice_;  // draining: the grace period's end
  } else if (!waiting_.empty()) {
    deadline_ =
        now + std::max<Micros>(min_slice_ / 2, 500);  // everyone waiting is at its limit: look again soon
  } else {
    deadline_ = 0;
  }
}

std::vector<TenantTimes> GpuScheduler::times(Micros now) {
  std::vector<TenantTimes> out;
  for (auto& [name, t] : tenants_) {
    TenantTimes x;
    x.name = name;
    x.share = t.usage.share(now);
    x.busy_total = t.usage.total();
    x.wait_total = t.wait_total;
    x.grants = t.grants;
    x.holder = held_ && holder_ == name;
    if (x.holder) {
      // The running slice counts as it goes.
      x.busy_total += std::min(now, slice_end_) - grant_start_;
    }
    for (const Waiter& w : waiting_) x.waiting += w.tenant == name;
    out.push_back(x);
  }
  return out;
}

}  // namespace eacgm::govern::sched
