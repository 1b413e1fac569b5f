"""What the Dyck figures draw alike."""


def legend_below(fig, ax):
    """The legend under the axes (inside, at the book's text size, it covers the curves), then
    the layout; returns the figure."""
    ax.legend(fontsize=10.5, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncols=2,
              frameon=False)
    fig.tight_layout()
    return fig
