// BpfLink's deleter, out of line so that bpf_link.h needs no libbpf header.
#include "probe/bpf_link.h"

#include <bpf/libbpf.h>

namespace eacgm::probe {

void BpfLinkDestroy::operator()(bpf_link* link) const { bpf_link__destroy(link); }

}  // namespace eacgm::probe
