// `eacgm serve`: the node agent. Traces every process on the machine, samples the GPUs,
// keeps the analysis current and serves it over HTTP (/metrics, /api/v1, a live stream)
// until SIGTERM or SIGINT; SIGHUP reloads the configuration.
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/environment.h"
#include "cli/trace_runner.h"
#include "cli/usage_errors.h"
#include "core/trace_mode.h"
#include "kubelet/pod_resources_client.h"
#include "node/serve.h"

namespace eacgm::cli {
namespace {

struct ServeFlags {
  node::NodeOptions options;
  std::string token_file;
  std::string mode;
  bool no_gpu = false;
  bool demo = false;
};

int serve(const CommandContext& ctx, ServeFlags& flags) {
  node::NodeOptions o = flags.options;
  read_trace_environment(o.request);
  o.config_path = ctx.config_path;
  o.request.mode = parse_trace_mode(flags.mode);
  o.request.sample_gpus = !flags.no_gpu;
  if (flags.demo) o.request.side_command = demo_command();
  if (!flags.token_file.empty()) o.token_file = flags.token_file;
  o.pod_source = [](const std::string& socket) { return kubelet::pod_resources_source(socket); };
  o.notice = print_error;
  return node::serve(std::move(o));
}

}  // namespace

void add_serve_command(CLI::App& app, CommandContext& ctx) {
  auto flags = std::make_shared<ServeFlags>();
  auto* sub =
      app.add_subcommand("serve",
                         "the node agent: trace every process, sample the GPUs, serve Prometheus metrics "
                         "and a JSON API until SIGTERM (SIGHUP reloads the config)");
  sub->add_option("--config", ctx.config_path, "configuration file (TOML, see docs/config.md)");
  sub->add_option(
      "--listen", flags->options.listen,
      "HOST:PORT to serve on (default [serve] listen, 127.0.0.1:9977); not loopback needs a token");
  sub->add_option("--token-file", flags->token_file,
                  "file holding the bearer token every request must carry (mode 0600)");
  sub->add_option("--advertise-url", flags->options.advertise_url,
                  "where other machines reach this agent's API, as the fleet's store lists it (default "
                  "[serve] advertise_url, else http://HOST:PORT of --listen; 0.0.0.0 as the host's name)");
  add_list_option(*sub, "--probes", flags->options.request.probes,
                  "catalogs or probe names, comma-separated");
  sub->add_option("--btf", flags->options.request.btf_path,
                  "kernel BTF file, for kernels without /sys/kernel/btf/vmlinux");
  sub->add_flag("--no-gpu", flags->no_gpu, "do not sample the GPUs through NVML");
  sub->add_flag("--demo", flags->demo,
                "also start the bundled CUDA demo program (eacgm-demo) beside the agent");
  sub->add_option("--store", flags->options.store,
                  "where to keep the history: sqlite:PATH (default sqlite:/var/lib/eacgm/eacgm.db), "
                  "postgresql://..., or off");
  sub->add_option("--node", flags->options.node_name,
                  "this node's name in the store (default the host name)");
  sub->add_option("--fleet-store", flags->options.fleet_store,
                  "the fleet's PostgreSQL (postgresql://...): the node keeps its own store (--store, "
                  "SQLite) and ships its minute and hour rollups and facts there");
  add_mode_option(*sub, flags->mode, "always-on");
  sub->footer(
      "Examples:\n"
      "  eacgm serve                                   metrics on http://127.0.0.1:9977/metrics\n"
      "  eacgm serve --listen 0.0.0.0:9977 --token-file /etc/eacgm/token\n"
      "  eacgm serve --demo                            the web UI on http://127.0.0.1:9977/ with the demo\n"
      "Routes: docs/api.md; metrics: docs/metrics.md");
  sub->final_callback([&ctx, flags] { ctx.exit_code = serve(ctx, *flags); });
}

}  // namespace eacgm::cli
