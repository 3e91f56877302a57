"""ani.validation: the one formatter of pydantic errors, and what its callers make of it."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from ani.errors import ConfigError
from ani.observer.checks import parse_checks
from ani.validation import format_validation_error


class _Inner(BaseModel):
    model_config = ConfigDict(extra="forbid")
    a: int = 0
    b: int = 0

    @model_validator(mode="after")
    def _both(self) -> _Inner:
        if self.a < 0 and self.b < 0:
            raise ValueError("a: negative; b: negative")
        return self


class _Outer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = "x"
    inner: _Inner = _Inner()
    items: list[int] = []

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be blank")
        return v

    @model_validator(mode="after")
    def _whole(self) -> _Outer:
        if self.name == "bad":
            raise ValueError("name: is bad")
        return self


def _err(data: object) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        _Outer.model_validate(data)
    return info.value


def test_dotted_paths_without_value_error_prefix() -> None:
    exc = _err({"name": " ", "items": [1, "x"], "colour": 1})
    assert format_validation_error(exc) == (
        "name: must not be blank; items.1: Input should be a valid integer, unable to parse "
        "string as an integer; colour: Extra inputs are not permitted"
    )


def test_error_without_path_stands_alone_or_is_put_at_top() -> None:
    exc = _err({"name": "bad"})
    assert format_validation_error(exc) == "name: is bad"
    assert format_validation_error(exc, top="arguments") == "arguments: name: is bad"
    assert format_validation_error(_err([1])) == "Input should be a valid dictionary or instance of _Outer"


def test_prefix_unknown_and_format_loc() -> None:
    exc = _err({"items": ["x"], "colour": 1})
    assert format_validation_error(exc, prefix="cfg", unknown="unknown field") == (
        "cfg.items.0: Input should be a valid integer, unable to parse string as an integer; "
        "cfg.colour: unknown field"
    )
    assert format_validation_error(exc, format_loc=lambda loc: "/".join(map(str, loc))).startswith("items/0: ")


def test_split_nested_puts_a_nested_validators_list_under_its_path() -> None:
    exc = _err({"inner": {"a": -1, "b": -1}})
    assert format_validation_error(exc) == "inner: a: negative; b: negative"
    assert format_validation_error(exc, split_nested=True) == "inner.a: negative; inner.b: negative"


def test_checks_name_the_list_when_it_is_not_one() -> None:
    with pytest.raises(ConfigError) as info:
        parse_checks({"kind": "reach"})
    assert str(info.value) == "checks: Input should be a valid list"


def test_load_yaml_names_the_file_and_raises_the_class_asked_for(tmp_path) -> None:
    from ani.errors import CampaignSpecError
    from ani.validation import load_yaml

    good = tmp_path / "good.yaml"
    good.write_text("a: [1, 2]\n")
    assert load_yaml(good) == {"a": [1, 2]}
    with pytest.raises(CampaignSpecError, match=r"missing\.yaml: cannot read: No such file or directory$"):
        load_yaml(tmp_path / "missing.yaml", CampaignSpecError)
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [1,\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml: not valid YAML: "):
        load_yaml(bad)
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"a: \xff\xfe\n")
    with pytest.raises(ConfigError, match=r"binary\.yaml: cannot read: not UTF-8 text"):
        load_yaml(binary)


def test_validate_mapping_names_source_and_what() -> None:
    from ani.errors import TopologyError
    from ani.validation import validate_mapping

    assert validate_mapping(_Outer, {"name": "y"}, source="f.yaml", what="model").name == "y"
    with pytest.raises(TopologyError, match=r"^f\.yaml: a model must be a mapping, got list$"):
        validate_mapping(_Outer, [], source="f.yaml", what="model", error=TopologyError)
    with pytest.raises(ConfigError, match=r"^f\.yaml: invalid model: inner\.a: negative; inner\.b: negative$"):
        validate_mapping(_Outer, {"inner": {"a": -1, "b": -1}}, source="f.yaml", what="model", split_nested=True)
