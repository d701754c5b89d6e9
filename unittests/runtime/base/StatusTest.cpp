//===- StatusTest.cpp - Status codes and context --------------------------===//

#include "shardlin/runtime/base/Status.h"

#include <gtest/gtest.h>

using namespace shardlin::rt;

TEST(Status, OkHasCodeOkAndNoMessage) {
  Status s = Status::ok();
  EXPECT_TRUE(s.isOk());
  EXPECT_EQ(s.code(), StatusCode::Ok);
  EXPECT_TRUE(s.message().empty());
  EXPECT_TRUE(s.withContext("rank 0").isOk());
  EXPECT_TRUE(s.withCode(StatusCode::Aborted).isOk());
}

TEST(Status, NamedConstructorsSetTheirCode) {
  EXPECT_EQ(Status::invalidArgument("x").code(), StatusCode::InvalidArgument);
  EXPECT_EQ(Status::deadlineExceeded("x").code(),
            StatusCode::DeadlineExceeded);
  EXPECT_EQ(Status::aborted("x").code(), StatusCode::Aborted);
  EXPECT_EQ(Status::ioError("x").code(), StatusCode::IoError);
  EXPECT_EQ(Status::unavailable("x").code(), StatusCode::Unavailable);
  EXPECT_EQ(Status::internal("x").code(), StatusCode::Internal);
  EXPECT_EQ(Status::notFound("x").code(), StatusCode::NotFound);
  EXPECT_EQ(Status::resourceExhausted("x").code(),
            StatusCode::ResourceExhausted);
  // An error can never be made to look like success.
  Status notOk = Status::error(StatusCode::Ok, "x");
  EXPECT_FALSE(notOk.isOk());
  EXPECT_EQ(notOk.code(), StatusCode::Internal);
}

TEST(Status, ContextKeepsTheCodeAndPrefixesTheMessage) {
  Status s = Status::deadlineExceeded("all_gather: timed out")
                 .withContext("rank 2");
  EXPECT_EQ(s.code(), StatusCode::DeadlineExceeded);
  EXPECT_EQ(s.message(), "rank 2: all_gather: timed out");
  Status a = s.withCode(StatusCode::Aborted);
  EXPECT_EQ(a.code(), StatusCode::Aborted);
  EXPECT_EQ(a.message(), s.message());
}

TEST(Status, CodeNames) {
  EXPECT_STREQ(statusCodeName(StatusCode::InvalidArgument),
               "invalid argument");
  EXPECT_STREQ(statusCodeName(StatusCode::DeadlineExceeded),
               "deadline exceeded");
  EXPECT_STREQ(statusCodeName(StatusCode::Aborted), "aborted");
  EXPECT_STREQ(statusCodeName(StatusCode::IoError), "I/O error");
  EXPECT_STREQ(statusCodeName(StatusCode::Unavailable), "unavailable");
  EXPECT_STREQ(statusCodeName(StatusCode::Internal), "internal");
  EXPECT_STREQ(statusCodeName(StatusCode::NotFound), "not found");
  EXPECT_STREQ(statusCodeName(StatusCode::ResourceExhausted),
               "resource exhausted");
  EXPECT_STREQ(statusCodeName(StatusCode::Ok), "ok");
}
