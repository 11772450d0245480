from django.apps import AppConfig


class SandboxRunnerConfig(AppConfig):
    name = "sandbox_runner"
    verbose_name = "Sandbox runner"
