"""The DynamoModel controller: a model's endpoints, and a LoRA adapter loaded into each."""

from reconcilers.model.lora import LoraSettings
from reconcilers.model.reconciler import NAME, ModelReconciler, register

__all__ = ["NAME", "LoraSettings", "ModelReconciler", "register"]
