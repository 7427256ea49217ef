"""The kernel (private): components and their runners, the run API, buses and sessions,
subscriptions and their queries, the configuration, the kernel's own objects, and the extension
interface that shipped and third-party components plug into. It imports no shipped component."""
