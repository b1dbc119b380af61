// Call: the retry budget the engine lends a provider operation.
#include <catch2/catch.hpp>

#include "engine/provider/call.h"

using namespace plinth;

namespace {
RetryPolicy instant(int attempts) { return {attempts, std::chrono::milliseconds(0), std::chrono::milliseconds(0)}; }
}  // namespace

TEST_CASE("call: the attempt budget bounds failures in a row, progress starts a new run") {
  Call call(Deadline::never(), instant(3));
  const Error blip = Error::retryable_error("HTTP 503");
  CHECK(call.retry(blip));
  CHECK(call.retry(blip));
  CHECK_FALSE(call.retry(blip));  // three attempts in a row, none succeeded
  CHECK(call.stopped_by() == "attempts");
  CHECK(call.attempts() == 3);

  Call longer(Deadline::never(), instant(3));
  for (int request = 0; request < 10; ++request) {  // ten requests, each failing twice then succeeding
    CHECK(longer.retry(blip));
    CHECK(longer.retry(blip));
    longer.progress();
  }
  CHECK(longer.attempts() == 21);
  CHECK(longer.stopped_by().empty());
}

TEST_CASE("call: errors that are not retryable, a cancelled call and a passed deadline are not retried") {
  Call call(Deadline::never(), instant(5));
  CHECK_FALSE(call.retry(Error::fatal("HTTP 400")));
  CHECK(call.stopped_by().empty());

  std::atomic<bool> cancel{true};
  Call cancelled(Deadline::never(), instant(5), &cancel);
  CHECK_FALSE(cancelled.retry(Error::retryable_error("HTTP 503")));

  Call late(Deadline::after(std::chrono::milliseconds(0)), {5, std::chrono::milliseconds(50), std::chrono::milliseconds(50)});
  Error throttled = Error::retryable_error("HTTP 429");
  throttled.retry_after_ms = 1000;
  CHECK_FALSE(late.retry(throttled));
  CHECK(late.stopped_by() == "deadline");
}

TEST_CASE("call: throttling without a Retry-After is bounded by the deadline, not the attempt budget") {
  RetryPolicy quick{2, std::chrono::milliseconds(0), std::chrono::milliseconds(0), std::chrono::milliseconds(1),
                    std::chrono::milliseconds(2)};
  Error quota{Error::Kind::Throttled, "HTTP 429 rateLimitExceeded", 0};
  Call bounded(Deadline::after(std::chrono::milliseconds(300)), quick);
  int retries = 0;
  while (bounded.retry(quota)) ++retries;
  CHECK(retries > 2);  // more than retry_attempts allows for other errors
  CHECK(bounded.stopped_by() == "deadline");
  Call endless(Deadline::never(), quick);
  retries = 0;
  while (endless.retry(quota)) ++retries;
  CHECK(retries == 4 * 2 - 1);  // without a deadline: four times the budget
  CHECK(endless.stopped_by() == "attempts");
  // With a Retry-After the server says how long: the attempt budget applies as before.
  Error told = quota;
  told.retry_after_ms = 1;
  Call counted(Deadline::never(), quick);
  CHECK(counted.retry(told));
  CHECK_FALSE(counted.retry(told));
}
