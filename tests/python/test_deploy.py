"""deploy(): a Winograd-aware model on wino's INT8 engines computes exactly what its eval-mode
emulation computes."""
import pytest

torch = pytest.importorskip("torch")

import wino  # noqa: E402
from wino.torch.deploy import Int8WinogradConv2d, deploy  # noqa: E402
from wino.torch.wat import QConv2d, WinogradQuantConv2d, calibrate  # noqa: E402


class _Net(torch.nn.Module):
    """A small residual network: Winograd layers of every tile, a strided direct INT8 layer,
    float glue (residual add, ReLU, pooling, linear)."""

    def __init__(self, per_channel):
        super().__init__()
        self.stem = WinogradQuantConv2d(2, 8, tile_m=4, relu=True, per_channel=per_channel)
        self.a = WinogradQuantConv2d(8, 8, tile_m=6, relu=True)
        self.b = WinogradQuantConv2d(8, 8, tile_m=2, bias=False, per_channel=per_channel)
        self.down = QConv2d(8, 12, stride=2, relu=True)
        self.head = torch.nn.Linear(12, 3)

    def forward(self, x):
        x = self.stem(x)
        x = torch.relu(self.b(self.a(x)) + x)
        x = self.down(x)
        return self.head(x.mean((2, 3)))


def _model(per_channel=False, device="cpu"):
    torch.manual_seed(0)
    model = _Net(per_channel).to(device)
    x = torch.randn(6, 2, 13, 11, device=device)
    calibrate(model, [x[:3], x[3:]])
    with torch.no_grad():  # as after training: clips moved off their calibrated values
        model.a.alpha_ta.mul_(0.7)
        model.b.alpha_tw.mul_(0.8)
        model.stem.clip.mul_(0.9)
    return model.eval(), x


@pytest.mark.parametrize("per_channel", (False, True))
def test_deployed_equals_emulated(per_channel):
    model, x = _model(per_channel)
    deployed = deploy(model, x[:1])
    for name in ("stem", "a", "b"):
        assert isinstance(getattr(deployed, name), Int8WinogradConv2d)
        assert isinstance(getattr(model, name), WinogradQuantConv2d)  # the original is kept
    assert deployed.down is not model.down and isinstance(deployed.down, QConv2d)
    with torch.no_grad():
        emulated, out = model(x), deployed(x)
    assert torch.equal(out, emulated)
    # and layer by layer, including another batch and image size than example_input's
    with torch.no_grad():
        x2 = torch.randn(2, 2, 7, 19)
        assert torch.equal(deployed.stem(x2), model.stem(x2))


def test_deploy_a_single_layer():
    model, x = _model()
    layer = deploy(model.stem, x)
    assert isinstance(layer, Int8WinogradConv2d)
    with torch.no_grad():
        assert torch.equal(layer(x), model.stem(x))


def test_deploy_refuses_what_the_engines_refuse():
    """An F(6,3) layer past the int32 bound: wino refuses it when deploy creates the engine."""
    layer = WinogradQuantConv2d(64, 4, tile_m=6, fit_int32=False)
    x = torch.randn(2, 64, 8, 8)
    calibrate(layer, [x])
    with torch.no_grad():
        layer.alpha_tw.mul_(0.05)
    assert layer.int32_bound() > 2 ** 31 - 1
    with pytest.raises(wino.WinoUnsupported):
        deploy(layer, x)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_deployed_equals_emulated_cuda():
    model, x = _model(True, device="cuda")
    deployed = deploy(model, x[:1])
    with torch.no_grad():
        assert torch.equal(deployed(x), model(x))
        cpu = deploy(model.cpu(), x[:1].cpu())  # the engines agree across devices
        assert torch.equal(cpu.stem(x.cpu()), deployed.stem(x).cpu())
