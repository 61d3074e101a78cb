// `eacgm top`: a live terminal view of a running agent (GPUs, processes, their rates and
// slow calls) over its JSON API, drawn with ncurses; `c` captures 5 s of the selected
// process through POST /api/v1/capture. The lines come from cli/top_view.h. With no
// agent at the default address (and no --server given), it starts its own probes in
// its process (node/node_agent.h) and reads those.
#include <curses.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/client_flags.h"
#include "cli/commands.h"
#include "cli/environment.h"
#include "cli/top_view.h"
#include "cli/trace_runner.h"
#include "node/node_agent.h"

namespace eacgm::cli {
namespace {

struct TopFlags {
  ClientFlags client;
  bool server_given = false;  // --server was on the command line: no agent of its own
  std::string config_path;    // for its own agent
  double interval_s = 1;
};

// One refresh: false (and the reason) when the agent did not answer.
bool poll_agent(server::ApiClient& client, TopModel& model, double dt_s, std::string& why) {
  std::string docs[4];
  const char* paths[4] = {"/api/v1/processes", "/api/v1/gpus", "/api/v1/functions", "/api/v1/anomalies"};
  for (int i = 0; i < 4; ++i) {
    auto r = client.get(paths[i]);
    if (!r) {
      why = r.error();
      return false;
    }
    if (r->status != 200) {
      why = fmt::format("{} answered {}: {}", paths[i], r->status, server::api_error_text(*r));
      return false;
    }
    docs[i] = std::move(r->body);
  }
  update_top_model(model, docs[0], docs[1], docs[2], docs[3], dt_s);
  return true;
}

// Into the state directory, named by the pid and the time: the current directory may be a
// repository's, where a stray file would be committed by mistake.
std::string capture_selected(server::ApiClient& client, std::uint32_t pid) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
  const std::string file = fmt::format("{}/eacgm-capture-{}-{}.json", state_directory(), pid, stamp);
  auto r = client.post_json("/api/v1/capture", fmt::format("{{\"pid\":{},\"seconds\":5}}", pid));
  if (!r) return r.error();
  if (r->status != 200)
    return fmt::format("capture of pid {}: {} {}", pid, r->status, server::api_error_text(*r));
  std::FILE* out = std::fopen(file.c_str(), "w");
  if (out == nullptr) return fmt::format("cannot write {}", file);
  const bool ok = std::fwrite(r->body.data(), 1, r->body.size(), out) == r->body.size();
  if (std::fclose(out) != 0 || !ok) return fmt::format("cannot write {}", file);
  return fmt::format("captured 5 s of pid {} into {}", pid, file);
}

// The agent top starts when none answers: serve's trace and routes on a loopback port the
// system picks, without a store, a token or the kubelet; its notices are kept for the
// status line, not printed (the screen is the view's).
node::NodeOptions own_agent_options(const std::string& config_path) {
  node::NodeOptions o;
  o.config_path = config_path;
  read_trace_environment(o.request);
  o.listen = "127.0.0.1:0";
  o.token_file = "";
  o.history = false;
  o.trim_memory = false;
  return o;
}

int top_command(const TopFlags& flags) {
  if (!(flags.interval_s >= 0.2 && flags.interval_s <= 60)) {
    print_command_error("top", fmt::format("--interval {}: from 0.2 to 60 seconds", flags.interval_s));
    return 2;
  }
  auto client = open_client(flags.client, std::chrono::seconds(40));
  if (!client) {
    print_command_error("top", client.error());
    return 2;
  }
  TopModel model;
  std::string why;
  std::unique_ptr<node::NodeAgent> own;  // outlives the view: its probes stop after endwin
  if (!poll_agent(**client, model, 0, why)) {
    if (flags.server_given) {
      print_command_error("top", "no agent answers: " + why);
      return 2;
    }
    print_command_error("top",
                        fmt::format("no agent at {}; starting its own probes...", flags.client.server));
    auto started = node::start_in_background(own_agent_options(flags.config_path));
    if (!started) {
      print_command_error("top", "no agent answers at " + flags.client.server +
                                     " and its own probes did not start: " + started.error());
      return started.error_kind() == ErrorKind::kUsage ? 2 : 1;
    }
    own = std::move(started).value();
    ClientFlags local = flags.client;
    local.server = own->url();
    client = open_client(local, std::chrono::seconds(40));
    if (!client || !poll_agent(**client, model, 0, why)) {
      print_command_error("top", "its own agent did not answer: " + (client ? why : client.error()));
      return 1;
    }
  }
  if (own) model.source = "own probes: no agent at " + flags.client.server;
  initscr();
  cbreak();
  noecho();
  keypad(stdscr, TRUE);
  curs_set(0);
  timeout(100);
  TopViewState view;
  auto last = std::chrono::steady_clock::now();
  bool editing_filter = false;
  while (true) {
    const auto now = std::chrono::steady_clock::now();
    const double dt = std::chrono::duration<double>(now - last).count();
    if (dt >= flags.interval_s) {
      if (!poll_agent(**client, model, dt, why)) model.status = "agent: " + why;
      if (own && model.status.empty()) model.status = own->last_notice();
      last = now;
    }
    const auto rows = visible_processes(model, view);
    if (!rows.empty() && view.selected >= rows.size()) view.selected = rows.size() - 1;
    int h = 0, w = 0;
    getmaxyx(stdscr, h, w);
    erase();
    auto lines = render_top(model, view, static_cast<std::size_t>(w), static_cast<std::size_t>(h));
    if (editing_filter) lines.back() = "filter: " + view.filter + "_";
    for (std::size_t i = 0; i < lines.size(); ++i) mvaddnstr(static_cast<int>(i), 0, lines[i].c_str(), w);
    refresh();
    const int key = getch();
    if (key == ERR) continue;
    if (editing_filter) {
      if (key == '\n' || key == KEY_ENTER || key == 27) {
        editing_filter = false;
      } else if (key == KEY_BACKSPACE || key == 127 || key == 8) {
        if (!view.filter.empty()) view.filter.pop_back();
      } else if (key >= 32 && key < 127 && view.filter.size() < 32) {
        view.filter += static_cast<char>(key);
      }
      continue;
    }
    switch (key) {
      case 'q':
        endwin();
        return 0;
      case 'm':
        view.sort = TopSort::kGpuMemory;
        break;
      case 's':
        view.sort = TopSort::kCallsPerSecond;
        break;
      case 'k':
        view.sort = TopSort::kKernelsPerSecond;
        break;
      case 'g':
        view.group_by_rank = !view.group_by_rank;
        break;
      case '/':
        editing_filter = true;
        view.filter.clear();
        break;
      case KEY_DOWN:
        ++view.selected;
        break;
      case KEY_UP:
        if (view.selected > 0) --view.selected;
        break;
      case 'c':
        if (view.selected < rows.size()) {
          model.status = fmt::format("capturing 5 s of pid {}...", rows[view.selected].pid);
          erase();
          auto shown = render_top(model, view, static_cast<std::size_t>(w), static_cast<std::size_t>(h));
          for (std::size_t i = 0; i < shown.size(); ++i)
            mvaddnstr(static_cast<int>(i), 0, shown[i].c_str(), w);
          refresh();
          model.status = capture_selected(**client, rows[view.selected].pid);
        }
        break;
      default:
        break;
    }
  }
}

}  // namespace

void add_top_command(CLI::App& app, CommandContext& ctx) {
  auto flags = std::make_shared<TopFlags>();
  auto* sub = app.add_subcommand("top",
                                 "a live terminal view of a running agent (or, with none, of its own "
                                 "probes): GPUs, processes, rates, slow calls");
  add_client_options(*sub, flags->client);
  auto* server_option = sub->get_option("--server");
  sub->add_option("--interval", flags->interval_s, "seconds between refreshes (default 1)");
  sub->footer(
      "Keys: m/s/k sort by GPU memory, calls/s, kernels/s; / filter (Enter ends); g group by rank;\n"
      "      up/down select; c capture 5 s of the selected process into\n"
      "      $XDG_STATE_HOME/eacgm (else ~/.local/state/eacgm, else /tmp)/eacgm-capture-PID-TIME.json; q "
      "quit");
  sub->final_callback([&ctx, flags, server_option] {
    flags->server_given = server_option->count() > 0;
    flags->config_path = ctx.config_path;
    ctx.exit_code = top_command(*flags);
  });
}

}  // namespace eacgm::cli
