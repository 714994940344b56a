package plan

// ChartStrategy is how a Helm chart's device requests move to DRA. The
// chart's templates are never edited.
type ChartStrategy string

// Chart strategies, in the order they are considered.
const (
	// ChartExtendedResource (KEP-5004): the target serves the extended
	// resource through a DeviceClass's extendedResourceName, and the
	// chart's workloads need only a count: the chart stays as it is.
	ChartExtendedResource ChartStrategy = "extended-resource"
	// ChartValuesFile: the chart's values expose pod-level resourceClaims
	// and extra objects, so a values file beside Chart.yaml moves the
	// requests to claims; rendering with it gives what migrating the
	// render gives.
	ChartValuesFile ChartStrategy = "values-file"
	// ChartPostRenderer: kubedra migrate - as Helm's post-renderer
	// migrates every render (helm template, install, upgrade).
	ChartPostRenderer ChartStrategy = "post-renderer"
	// ChartNone: the chart renders no device request.
	ChartNone ChartStrategy = "none"
	// ChartNotRendered: the chart did not render (a chart/render error).
	ChartNotRendered ChartStrategy = "not-rendered"
)

// ChartChoice is the strategy chosen for one chart, and why.
type ChartChoice struct {
	// Chart is the chart's folder as the user named it, Name its name.
	Chart string `json:"chart"`
	Name  string `json:"name"`
	// Findings counts the device requests the chart renders.
	Findings int           `json:"findings"`
	Strategy ChartStrategy `json:"strategy"`
	// Why explains the choice (and why the earlier strategies do not fit).
	Why string `json:"why"`
	// Command is what to run: the post-renderer command line, or the helm
	// command that renders with the values file.
	Command string `json:"command,omitempty"`
	// ValuesFile is the values file of the values-file strategy (beside
	// Chart.yaml), which migrate writes.
	ValuesFile string `json:"valuesFile,omitempty"`
	// Sets are the chart's own DRA values the values file sets
	// (ollama.gpu.draEnabled=true), when the chart offers DRA itself.
	Sets []string `json:"sets,omitempty"`
	// RenderedWith is the values file migrate wrote (values-file strategy)
	// that scan and check rendered the chart with, after the user's values,
	// as the chart is installed; "" when there is none.
	RenderedWith string `json:"renderedWith,omitempty"`
	// ProbeRenders counts the renders the choice and the values-key
	// tracing took, beyond the chart's own.
	ProbeRenders int `json:"probeRenders"`
}
