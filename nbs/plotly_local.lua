-- Plotly figures without a CDN. Notebook outputs from plotly's `notebook_connected` renderer load plotly.js (and
-- MathJax) from CDNs in every figure; this filter drops those <script> tags and, on pages that draw a figure, adds
-- plotly.js as a Quarto HTML dependency: one copy in site_libs/ for the whole site, the exact build that ships with
-- the installed plotly package (so it matches the figures' JSON).
local CDN_SCRIPTS = {
  '<script[^>]-src="https://cdn%.plot%.ly/[^"]*"[^>]*>%s*</script>',          -- per-figure plotly.js
  '<script type="module">%s*import "https://cdn%.plot%.ly/[^"]*"%s*</script>', -- the renderer's one-off loader
  '<script[^>]-src="https://cdnjs%.cloudflare%.com/ajax/libs/mathjax/[^"]*"[^>]*>%s*</script>',
}

local plotly_js = nil
local function find_plotly_js()
  if plotly_js == nil then
    local ok, out = pcall(pandoc.pipe, "python", {"-c",
      "import plotly, pathlib; print(pathlib.Path(plotly.__file__).parent/'package_data'/'plotly.min.js')"}, "")
    if not ok then error("plotly_local.lua: cannot find plotly.min.js (is the plotly package installed?): " .. tostring(out)) end
    plotly_js = out:gsub("%s+$", "")
  end
  return plotly_js
end

local uses_plotly = false
local function strip(el)
  if not el.format:match("html") then return nil end
  local text = el.text
  for _, pat in ipairs(CDN_SCRIPTS) do text = text:gsub(pat, "") end
  if text:find("Plotly.newPlot", 1, true) then uses_plotly = true end
  if text ~= el.text then el.text = text; return el end
end

return {
  { RawBlock = strip, RawInline = strip },
  { Pandoc = function(doc)
      if uses_plotly and quarto.doc.is_format("html") then
        quarto.doc.add_html_dependency({ name = "plotly", version = "local", scripts = { find_plotly_js() } })
      end
      return doc
    end },
}
