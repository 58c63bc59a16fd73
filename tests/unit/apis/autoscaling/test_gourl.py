import pytest

from agones.apis.autoscaling.v1.gourl import url_parse_error


@pytest.mark.parametrize(
    ("url", "error"),
    [
        pytest.param(
            "https://autoscaler-tls-service.default.svc:8000/scale", None, id="https-port"
        ),
        pytest.param("http://[::1]:8080/x", None, id="ipv6"),
        pytest.param("scale", None, id="relative"),
        pytest.param("mailto:someone@example.com", None, id="opaque"),
        pytest.param("", None, id="empty"),
        pytest.param(":8080/x", "missing protocol scheme", id="leading-colon"),
        pytest.param(
            "a b:c/d", "first path segment in URL cannot contain colon", id="colon-in-first-segment"
        ),
        pytest.param("http://host:port/", 'invalid port ":port" after host', id="bad-port"),
        pytest.param("http://[::1/x", "missing ']' in host", id="unclosed-ipv6"),
        pytest.param("http://a/%zz", 'invalid URL escape "%zz"', id="bad-escape"),
        pytest.param(
            "http://a/\x7f", "net/url: invalid control character in URL", id="control-char"
        ),
        pytest.param("http://us er@a/", "net/url: invalid userinfo", id="bad-userinfo"),
    ],
)
def test_url_parse_error(url: str, error: str | None) -> None:
    assert url_parse_error(url) == error
