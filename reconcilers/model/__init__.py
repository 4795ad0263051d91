"""The DynamoModel controller: a model's endpoints, and a LoRA adapter loaded into each."""

from reconcilers.model.endpoints import CACHE_SELECTORS, CACHE_TRANSFORMS
from reconcilers.model.lora import LoraSettings
from reconcilers.model.reconciler import NAME, ModelReconciler, register

__all__ = ["CACHE_SELECTORS", "CACHE_TRANSFORMS", "NAME", "LoraSettings", "ModelReconciler",
           "register"]
