from django.contrib import admin

from .models import WorkerHeartbeat


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(admin.ModelAdmin):
    list_display = ["hostname", "last_seen", "python_platform"]
    readonly_fields = ["hostname", "last_seen", "python_platform"]
