"""`--kafka-conf-file` read as Java properties (issue 49.2): the forms Kafka's own clients read
(`key=value`, `key: value`, `key value`, continuations, escapes), and no error ever quoting a
value or a line: the secrets live in this file."""

from __future__ import annotations

from pathlib import Path

import pytest

from lineage_quality.errors import ConfigError
from lineage_quality.producer.kafka.conf_file import settings_from_pairs

SECRET = "S3cr3t-pw:with=separators and blanks"


def _file(tmp_path: Path, text: str | bytes) -> str:
    path = tmp_path / "kafka.properties"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return str(path)


def test_the_java_properties_forms_are_read_as_kafkas_clients_read_them(tmp_path: Path) -> None:
    conf = _file(
        tmp_path,
        "# a comment\n"
        "! another\n"
        "security.protocol=SASL_SSL\n"
        f"sasl.password: {SECRET}\n"  # the colon form: the value is all after ': '
        "sasl.mechanism   SCRAM-SHA-512  \n"  # the blank form; blanks around dropped
        "   sasl.username = lq\n"
        "ssl.ca.location=/etc/ssl/a\\\n"  # continued on the next line, its indent dropped
        "      b.pem\n"
        "client.id=caf\\u00e9\\tlq\n"  # escapes
        "sasl.kerberos.principal=a\\=b\\:c\\ \\\\d\n"  # escaped separators, blank, backslash
        "ssl.key.password=\n"  # empty on purpose
        "\n",
    )
    assert settings_from_pairs([], [conf]) == {
        "security.protocol": "SASL_SSL",
        "sasl.password": SECRET,
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "lq",
        "ssl.ca.location": "/etc/ssl/ab.pem",
        "client.id": "café\tlq",
        "sasl.kerberos.principal": "a=b:c \\d",
        "ssl.key.password": "",
    }


@pytest.mark.parametrize(
    "line",
    [
        "hunter2-Secret",  # a password wrapped onto a line of its own
        "sasl.password",  # a key alone (no separator, no value)
        "sasl.password\t  ",
        "=S3cr3t-only-value",  # no key
        ": S3cr3t-only-value",
        "pa$$(S3cr3t)=x",  # a key no setting has: its text is the secret's
        '"sasl.password"="S3cr3t"',
        "sasl.password=bad\\u12G4S3cr3t",  # a malformed escape in a secret's value
        "S3cr3t\\",  # a continuation at the end of the file
    ],
)
def test_a_bad_line_is_named_by_its_number_and_never_quoted(tmp_path: Path, line: str) -> None:
    conf = _file(tmp_path, f"security.protocol=SASL_SSL\n# ok\n{line}\n")
    with pytest.raises(ConfigError) as caught:
        settings_from_pairs([], [conf])
    message = str(caught.value)
    assert message.startswith(f"--kafka-conf-file {conf}, line 3"), message
    for fragment in ("hunter2", "S3cr3t", "pa$$", "\\u12"):
        assert fragment not in message, message


def test_a_continued_line_is_named_by_its_first_line(tmp_path: Path) -> None:
    conf = _file(tmp_path, "a.b=1\nsasl.password=S3cr3t\\\n  \\uZZZZ\n")
    with pytest.raises(ConfigError, match=r"line 2 \(the value of sasl\.password\): a malformed"):
        settings_from_pairs([], [conf])


def test_a_file_not_utf8_is_named_by_its_line_never_quoted(tmp_path: Path) -> None:
    conf = _file(tmp_path, b"a.b=1\nsasl.password=S3cr3t\xff\xfe\n")
    with pytest.raises(ConfigError) as caught:
        settings_from_pairs([], [conf])
    assert str(caught.value) == f"--kafka-conf-file {conf}, line 2: not UTF-8 text"


def test_flags_are_key_equals_value_and_never_quoted_either() -> None:
    assert settings_from_pairs(["a.b=1", "a.b=2 ", "c.d=x=y"], []) == {"a.b": "2", "c.d": "x=y"}
    for bad in ("sasl.password S3cr3t", "S3cr3t", "=S3cr3t", "sasl.pass word=S3cr3t"):
        with pytest.raises(ConfigError) as caught:
            settings_from_pairs(["a.b=1", bad], [])
        assert str(caught.value) == "--kafka-conf number 2: not KEY=VALUE"
