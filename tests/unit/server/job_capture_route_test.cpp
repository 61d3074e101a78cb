// The job capture route's request (server/job_capture_route.h).
#include "server/job_capture_route.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace eacgm::server {
namespace {

Request post(std::string body) {
  Request r;
  r.method = "POST";
  r.path = "/api/v1/capture/job";
  r.headers.emplace_back("Content-Type", "application/json");
  r.body = std::move(body);
  return r;
}

TEST(JobCaptureAsk, TakesTheJobAndSeconds) {
  auto ask = parse_job_capture_ask(post(R"({"job":"81723","seconds":2.5})"));
  ASSERT_TRUE(ask) << ask.error();
  EXPECT_EQ(ask->job, "81723");
  EXPECT_DOUBLE_EQ(ask->seconds, 2.5);
  auto plain = parse_job_capture_ask(post(R"({"job":"ml/run-1"})"));
  ASSERT_TRUE(plain) << plain.error();
  EXPECT_DOUBLE_EQ(plain->seconds, 5) << "5 s unless said";
}

TEST(JobCaptureAsk, RefusesWhatItCannotDo) {
  for (const auto& [body, says] : std::vector<std::pair<std::string, std::string>>{
           {R"({"seconds":1})", "job: give the job's id"},
           {R"({"job":"","seconds":1})", "job: the job's id as a string"},
           {R"({"job":81723,"seconds":1})", "job: the job's id as a string"},
           {R"({"job":")" + std::string(257, 'j') + R"("})", "of 1 to 256 characters"},
           {R"({"job":"7","seconds":0})", "seconds: a number more than 0 and at most 60"},
           {R"({"job":"7","seconds":61})", "seconds"},
           {R"({"job":"7","seconds":"5"})", "seconds"},
           {R"({"job":"7","pids":[1]})", "pids: not a field of a job capture"},
           {"job=7", "not a JSON object"},
           {"", "not a JSON object"}}) {
    auto ask = parse_job_capture_ask(post(body));
    ASSERT_FALSE(ask) << body;
    EXPECT_NE(ask.error().find(says), std::string::npos) << body << ": " << ask.error();
  }
}

}  // namespace
}  // namespace eacgm::server
