"""Short ASCII labels drawn for symbols that no bundled font draws (✅ as ``[ok]``, ❌ as ``[x]``).

The atlas gives each such symbol with no glyph a glyph index of its own, which the renderer draws as the label's
letters (:meth:`snapglyph.raster.atlas.Atlas.expand_labels`) and counts as replaced.
"""

__all__ = ["SYMBOL_LABELS"]

# Short ASCII labels for symbols that no bundled font draws, so that ✅ (pass) and ❌ (fail) stay distinct instead of
# both becoming the replacement box. Where the list comes from: the emoji that agent transcripts use for status and
# structure, as named in issue 3's defect report, plus the glyph-less emoji in ../shared/data (measured over the
# decoded strings of all its transcripts: ✅ 50, ⚡ 27, 📋 6, ✨ 4, 💥 4, 🍰 2, 💔 2, 😀 2, 🚨 2, 👋 1, 👍 1; faces such
# as 😀 keep the box). Names follow the GitHub/Slack shortcodes where one is short (:zap: :boom: :+1:), else the
# meaning. Labels are ASCII, except one look-alike box-drawing glyph.
# Only characters with no glyph in an atlas get the label there (✔ ✖ ⚠ ☑ ✗ have glyphs in DejaVu Sans Mono and keep
# them; ⌛ has one in efont 16 px). A variation selector after a symbol is zero-width as before.
SYMBOL_LABELS = {
    0x2705: "[ok]", 0x2714: "[ok]", 0x2611: "[ok]", 0x1F197: "[ok]",            # ✅ ✔ ☑ 🆗
    0x274C: "[x]", 0x2716: "[x]", 0x2717: "[x]", 0x274E: "[x]",                 # ❌ ✖ ✗ ❎
    0x26A0: "[!]", 0x2757: "[!]", 0x2755: "[!]", 0x2753: "[?]", 0x2754: "[?]",  # ⚠ ❗ ❕ ❓ ❔
    0x26D4: "[no]", 0x1F6AB: "[no]", 0x1F6D1: "[stop]", 0x1F6A8: "[alert]",     # ⛔ 🚫 🛑 🚨
    0x1F680: "[rocket]", 0x1F525: "[fire]", 0x26A1: "[zap]", 0x1F4A5: "[boom]",  # 🚀 🔥 ⚡ 💥
    0x1F44D: "[+1]", 0x1F44E: "[-1]", 0x1F44B: "[wave]", 0x1F440: "[eyes]",      # 👍 👎 👋 👀
    0x1F4C1: "[dir]", 0x1F4C2: "[dir]", 0x1F4C4: "[doc]", 0x1F4DD: "[doc]",      # 📁 📂 📄 📝
    0x1F4CB: "[list]", 0x1F4CA: "[chart]", 0x1F4C8: "[chart]", 0x1F4E6: "[pkg]",  # 📋 📊 📈 📦
    0x1F41B: "[bug]", 0x1F4A1: "[idea]", 0x1F50D: "[search]", 0x1F50E: "[search]",  # 🐛 💡 🔍 🔎
    0x23F3: "[wait]", 0x231B: "[wait]", 0x23F1: "[timer]", 0x1F504: "[sync]",    # ⏳ ⌛ ⏱ 🔄
    0x1F389: "[party]", 0x2728: "[new]", 0x1F195: "[new]", 0x2B50: "[star]",     # 🎉 ✨ 🆕 ⭐
    0x1F7E2: "[green]", 0x1F534: "[red]", 0x1F7E1: "[yellow]", 0x1F7E0: "[orange]",  # 🟢 🔴 🟡 🟠
    0x1F535: "[blue]", 0x1F3AF: "[target]", 0x1F527: "[fix]", 0x1F6E0: "[tools]",  # 🔵 🎯 🔧 🛠
    0x1F6A7: "[wip]", 0x1F512: "[lock]", 0x1F517: "[link]", 0x1F4CC: "[pin]",    # 🚧 🔒 🔗 📌
    0x1F9EA: "[test]", 0x1F916: "[bot]", 0x1F4AC: "[chat]", 0x1F449: "[->]",     # 🧪 🤖 💬 👉
    0x1F370: "[cake]", 0x1F494: "[heartbreak]", 0x1F4AF: "[100]",                 # 🍰 💔 💯
    0x23BF: "\u2514",  # ⎿ (Claude Code's tool-output connector, 65 times in ../shared/data) as its look-alike └
}
"""Code point -> short ASCII label, drawn (where the atlas has no glyph for it) instead of the replacement box."""
