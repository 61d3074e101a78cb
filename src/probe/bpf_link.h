// BpfLink: a libbpf link owned from the moment an attach returns it; destroying it
// detaches the program (and closes what the link owns, such as a perf event).
#pragma once

#include <memory>

struct bpf_link;

namespace eacgm::probe {

struct BpfLinkDestroy {
  void operator()(bpf_link* link) const;
};

using BpfLink = std::unique_ptr<bpf_link, BpfLinkDestroy>;

}  // namespace eacgm::probe
