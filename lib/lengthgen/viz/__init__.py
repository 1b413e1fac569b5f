"""Interactive figures for the chapters: plain drawing functions, plus widgets that call them."""
