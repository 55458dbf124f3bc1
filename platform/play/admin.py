from django.contrib import admin

from .models import HumanGame


@admin.register(HumanGame)
class HumanGameAdmin(admin.ModelAdmin):
    list_display = ["match", "ladder", "clock", "created_at"]
    list_select_related = ["ladder"]
    raw_id_fields = ["match"]
    readonly_fields = ["match", "ladder", "clock", "address", "created_at"]
