"""Lesson 04 (automatic relevance determination) as a reader sees it: Figure 4.1 a precomputed slider, Figure 4.2's
Hinton panels the same size with a 10 pt key, Figure 4.3's caption naming its line styles, and the determinant lemma
derived and checked before PRML's re-estimate is set beside VB's update."""
from notebook_text import caption, cell_with, cells, code, prose

STEM = '04_ard'


def test_figure_3_1_is_a_precomputed_slider():
    assert any('figure_slider(' in s for k, s in cells(STEM) if k == 'code' and 'Figure 4.1:' in s)


def test_figure_3_2_hinton_panels_the_same_size_and_a_10_pt_key():
    src = cell_with(STEM, 'Figure 4.2:')
    assert 'width_ratios=[1, 1, 1.1]' in src and "layout='constrained'" in src
    assert 'fontsize=10, title_fontsize=10' in src


def test_figure_3_3_caption_says_what_the_lines_look_like():
    cap = caption(STEM, '4.3')
    assert 'dashed' in cap and 'solid' in cap


def test_derives_the_determinant_lemma_and_links_prml_to_vb():
    src, md = code(STEM), prose(STEM)
    assert 'C_s.det()' in src and 'C_inv' in src                 # SymPy checks the two identities
    assert 'Sherman-Morrison' in md and 'eigenvalue' in md
    assert "PRML's re-estimate" in md and 'post_var' in src       # type-II vs VB, column by column


def test_equations_numbered_in_order_and_the_updates_derived_by_hand():
    import re
    md = prose(STEM)
    tags = [int(k) for k in re.findall(r'\\tag\{4\.(\d+)\}', md)]
    assert tags == list(range(1, len(tags) + 1)) and len(tags) >= 8, tags
    flat_md = ' '.join(md.split())
    assert 'coefficient of $\\log\\alpha_d$' in flat_md and 'Student-t' in flat_md    # Gamma read-off, effective prior


def test_no_figure_cell_ends_in_a_bare_expression_that_prints():
    for k, s in cells(STEM):
        if k == 'code' and 'Figure 4.' in s:
            last = [l for l in s.splitlines() if l.strip() and not l.startswith('#')][-1]
            assert not last.lstrip().startswith(('fig.suptitle(', 'ax.set_title(', 'plt.title(')), last


def test_ppca_loading_length_is_called_squared():
    md = ' '.join(prose(STEM).split())
    assert 'loading length $\\lambda_d' not in md and 'squared loading length' in md


def test_figure_3_1_axis_is_filled_by_the_other_slider_positions():
    src = cell_with(STEM, 'Figure 4.1:')
    assert 'for other in ratios' in src and 'ax0.set_ylim(-3, top + 1)' in src
    assert 'other positions of the slider' in caption(STEM, '4.1')
