"""A stand-in for PrimeIntellect-ai/pydantic-config's ``BaseConfig`` (not
installable here), the one class verifiers v1 imports from it: a pydantic
``BaseModel`` that forbids unknown fields. The rest of that package
(its CLI parsing) is not reached by the conformance tests."""

from pydantic import BaseModel, ConfigDict


class BaseConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
