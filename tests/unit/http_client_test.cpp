// The HTTP client's parts that need no server: URLs and a request to an address where nothing
// listens, which is retried exactly data.remote.retries times and then reported unreachable.
// Requests against a real server (nginx) are in tests/cli/remote_cli_test.cpp.
#include "data/http_client.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

namespace mmprof {
namespace {

TEST(HttpClient, UrlsArePercentEncodedBySegment) {
  EXPECT_TRUE(is_remote("http://h/x"));
  EXPECT_TRUE(is_remote("https://h/x"));
  EXPECT_FALSE(is_remote("/data/http://x"));
  EXPECT_FALSE(is_remote("httpx://h"));
  EXPECT_EQ(join_url("http://h/d", "a b/c,d.jpg"), "http://h/d/a%20b/c%2Cd.jpg");
  EXPECT_EQ(join_url("http://h/d/", "x/\xC3\xA9.jpg"), "http://h/d/x/%C3%A9.jpg");
  EXPECT_EQ(join_url("http://h/d/", ""), "http://h/d/");
}

// A redirect is followed within the origin; the same server written another way is the same.
TEST(HttpClient, AnOriginIsTheSchemeHostAndPortAsTheServerSeesThem) {
  EXPECT_EQ(url_origin("http://127.0.0.1:8080/files/a.jpg"), "http://127.0.0.1:8080");
  EXPECT_EQ(url_origin("HTTP://Data.Example:8080?x=1"), "http://data.example:8080");
  EXPECT_EQ(url_origin("http://h:80/x"), url_origin("http://h/y"));
  EXPECT_EQ(url_origin("https://h:443/x"), "https://h");
  EXPECT_EQ(url_origin("https://user:pw@h/x"), "https://h");
  EXPECT_NE(url_origin("http://h:8080/x"), url_origin("http://h/x"));
  EXPECT_NE(url_origin("https://h/x"), url_origin("http://h/x"));
  EXPECT_NE(url_origin("http://h:443/x"), url_origin("http://h/x"));
  EXPECT_NE(url_origin("http://evil@127.0.0.2/x"), url_origin("http://127.0.0.1/x"));
}

// A port that was bound and closed again: connections to it are refused.
// A loopback port held bound but not listening while the object lives: a connection is refused,
// and no other process (a test running beside this one) can take the port meanwhile.
class ClosedPort {
 public:
  ClosedPort() : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t n = sizeof a;
    bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &n);
    port_ = ntohs(a.sin_port);
  }
  ~ClosedPort() { close(fd_); }
  ClosedPort(const ClosedPort&) = delete;
  ClosedPort& operator=(const ClosedPort&) = delete;
  int port() const { return port_; }

 private:
  int fd_;
  int port_ = 0;
};

TEST(HttpClient, NothingListeningIsRetriedThenUnreachable) {
  HttpClient http({.concurrency = 2, .retries = 2, .timeout_s = 5});
  const ClosedPort closed;
  const std::string url = "http://127.0.0.1:" + std::to_string(closed.port()) + "/a.jpg";
  std::vector<uint8_t> out;
  try {
    http.take(1, url, 10, 20, out);
    FAIL() << "read from a closed port";
  } catch (const HttpFailure& f) {
    EXPECT_TRUE(f.unreachable) << f.message;
    EXPECT_NE(f.message.find("GET " + url + " bytes 10-29: "), std::string::npos) << f.message;
    EXPECT_NE(f.message.find("(after 2 retries)"), std::string::npos) << f.message;
  }
  EXPECT_EQ(http.counters().requests, 3u);
  EXPECT_EQ(http.counters().retries, 2u);
  EXPECT_EQ(http.counters().bytes, 0u);
  // get() fails the same way, and the client is usable after a failure.
  EXPECT_THROW(http.get(url), HttpFailure);
  EXPECT_EQ(http.counters().requests, 6u);
}

}  // namespace
}  // namespace mmprof
